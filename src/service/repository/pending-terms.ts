/**
 * The pending list of the full-text index (`q`), as PostgreSQL's GIN
 * `fastupdate` keeps one: a create does not update the word runs
 * (`terms.ts`) in its own transaction; it appends its checkpoint's words to
 * the list, one small key, and the indexer (`service/indexer/`) merges the
 * list into the runs in batches, a task's pending checkpoints together.
 * Search reads the runs and the list, so a checkpoint is found by `q` the
 * moment its create commits.
 *
 * `pendingList (createdAt, checkpointId, taskId)` → the position of the
 * task's newest checkpoint before it (where the runs its words end close),
 * then its words as the index keys hold them, one a line. Entries sort in
 * the order checkpoints were made, and a task's in its own order (createdAt
 * rises strictly along a task), which is the order they merge in. In that
 * order a create appends where the creates before it did, and a merge
 * clears a run of neighbouring keys: on LMDB a commit's entries share their
 * pages, where keys by task put each on a page of its own, written at the
 * create and again at the merge (format 5, `docs/performance.md`, issue
 * 44). Format 4 kept the list by task, `pendingTerms (taskId, createdAt,
 * checkpointId)`: what a store holds there is listed first (it is older than
 * anything in the new list), merged and cleared as before; nothing is
 * written there any more.
 *
 * Beside it, the system space `termsDue (tenant)` marks a tenant with
 * entries, so the indexer finds them without walking every tenant; the
 * indexer clears the mark in the transaction that finds the list empty, so a
 * create that adds an entry meanwhile conflicts with it and the mark stays.
 * Where other processes write the store (FoundationDB), the tenant's count
 * of entries (`termsPending`, {@link pendingCounts}) is kept instead, and
 * its key is the mark: a create adds to it, and the same transaction clears
 * it.
 *
 * @module
 */
import { isAscii } from 'node:buffer';
import { systemKeyspace, type Subspace, type ValueCodec } from '../../store/keyspace.js';
import { decodeCounter, type KeyValue, type Transaction } from '../../store/store.js';
import { decodeWith, stringSpan } from './codec.js';
import { INDEX_NAMES, type DeferredEntry, type IndexName, type IndexPosition } from './indexes.js';

/** One checkpoint waiting to be merged into the word runs. */
export interface PendingEntry {
  taskId: string;
  at: IndexPosition;
  /** The task's newest checkpoint before this one when it was created; undefined for a task's first. */
  previous: IndexPosition | undefined;
  words: string[];
  /**
   * The index entries its create left to the merge (store format 7,
   * `indexes.ts`); none for an entry an earlier format wrote, whose create
   * wrote them all.
   */
  index: DeferredEntry[];
  /** The key it was read from (in either list). */
  key: Buffer;
  /** The stored value it was read from. */
  bytes: Uint8Array;
}

const EMPTY = Buffer.alloc(0);

/** Keys a purge reads at a time while it looks for a task's entries in the list. */
const PURGE_PAGE = 1_000;

export class PendingTermRows {
  /** Whether this transaction added an entry (the indexer is poked once it commits). */
  added = false;

  constructor(
    private readonly tx: Transaction,
    private readonly tenant: string,
    /** The list by task, as format 4 wrote it: read, merged and cleared, never written. */
    private readonly byTask: Subspace,
    /** The list in the order checkpoints were made (format 5). */
    private readonly inOrder: Subspace,
    private readonly codec: ValueCodec,
  ) {}

  /** Appends a new checkpoint's words and the index entries it leaves to the merge; `previous`: the task's newest before it. */
  add(taskId: string, at: IndexPosition, previous: IndexPosition | undefined, words: Iterable<string>, index: readonly DeferredEntry[]): void {
    this.write(this.key(taskId, at), previous, words, index);
    this.listed();
  }

  /** Appends a new checkpoint's entry written already, as {@link add} would write it (`entry-text.ts`). */
  addWritten(taskId: string, at: IndexPosition, value: Buffer): void {
    this.tx.set(this.key(taskId, at), value);
    this.listed();
  }

  private listed(): void {
    this.added = true;
    // Where other processes write the store, the tenant's count marks it due (its key is there until the indexer
    // finds the list empty): one key a create, not two.
    if (this.tx.shared === true) return this.count(1);
    // Every create of the tenant sets it, and only the indexer clears it: on LMDB a create that finds it set writes nothing (a page and its branches fewer in a lone create's commit).
    this.tx.setUnlessHeld(systemKeyspace().termsDue.pack(this.tenant), EMPTY);
  }

  /**
   * Moves the tenant's count of entries ({@link pendingCounts}) by `delta`,
   * where other processes write the store: an atomic add, read by no
   * create, so creates never conflict on it. A store one process holds
   * keeps no count (its indexer counts its own creates).
   */
  private count(delta: number): void {
    if (this.tx.shared === true && delta !== 0) this.tx.add(systemKeyspace().termsPending.pack(this.tenant), delta);
  }

  /** `n` listed entries cleared by a merge that wrote its own clears (`indexer/batch.ts`, `mergeInPlace`). */
  taken(n: number): void {
    this.count(-n);
  }

  /**
   * Makes the tenant's count what a listing of the whole list found:
   * `listed`, the rows of both lists read in this transaction (fewer than
   * its limit, so all of them). The count is read as a snapshot at the
   * same version and moved by the difference, so the creates that commit
   * meanwhile keep their adds. A count that drifted (an entry removed with
   * its checkpoint, a purge, entries written before the count was kept)
   * is right again from here.
   */
  async recount(listed: number): Promise<void> {
    if (this.tx.shared !== true) return;
    const [count] = await pendingCounts(this.tx, [this.tenant]);
    this.count(listed - count!);
  }

  /** The entry of one checkpoint, if it is still waiting. */
  async get(taskId: string, at: IndexPosition): Promise<PendingEntry | undefined> {
    const key = this.key(taskId, at);
    const value = await this.tx.get(key);
    if (value !== undefined) return this.entryOf({ key, value });
    const older = this.olderKey(taskId, at);
    const before = await this.tx.get(older);
    return before === undefined ? undefined : this.entryOf({ key: older, value: before });
  }

  /**
   * A listed entry as it is now: the same when its stored value is (a point
   * read, no decoding), rewritten when its checkpoint changed since,
   * undefined when it is gone (the checkpoint compacted or purged).
   */
  async current(listed: PendingEntry): Promise<PendingEntry | undefined> {
    const value = await this.tx.get(listed.key);
    if (value === undefined) return undefined;
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).equals(listed.bytes) ? listed : this.entryOf({ key: listed.key, value });
  }

  /** Replaces a waiting checkpoint's words or index entries (it was updated before it merged), where it waits. */
  rewrite(entry: PendingEntry, words: Iterable<string>, index: readonly DeferredEntry[] = entry.index): void {
    this.write(entry.key, entry.previous, words, index);
  }

  /**
   * Up to `limit` entries as stored, the older list's first, each list in key
   * order (for the merge thread, which decodes them itself). `snapshot`: read
   * without a conflict range over the lists (`RangeOptions.snapshot`), so the
   * entries creates add meanwhile do not make the reader's transaction run
   * again; it names the rows it takes itself.
   */
  async rows(limit: number, snapshot = false): Promise<KeyValue[]> {
    const older = this.byTask.range();
    const rows = await this.tx.getRange(older.begin, older.end, { limit, snapshot });
    if (rows.length >= limit) return rows;
    const { begin, end } = this.inOrder.range();
    return [...rows, ...(await this.tx.getRange(begin, end, { limit: limit - rows.length, snapshot }))];
  }

  /** The task and position an entry's key names, in either list. */
  positionOf(key: Buffer): [taskId: string, at: IndexPosition] {
    if (this.inOrder.contains(key)) {
      const [createdAt, checkpointId, taskId] = this.inOrder.unpack(key) as [string, string, string];
      return [taskId, { createdAt, checkpointId }];
    }
    const [taskId, createdAt, checkpointId] = this.byTask.unpack(key) as [string, string, string];
    return [taskId, { createdAt, checkpointId }];
  }

  /** Up to `limit` entries: the older list's, then the list's, each in key order (a task's in its order either way). */
  async list(limit: number): Promise<{ entries: PendingEntry[] }> {
    const entries: PendingEntry[] = [];
    // A loop, not a callback made at each call (`indexer/batch.ts`, `rowBytes`).
    for (const row of await this.rows(limit)) entries.push(this.entryOf(row));
    return { entries };
  }

  /** Removes a merged entry. */
  remove(entry: PendingEntry): void {
    this.tx.clear(entry.key);
    this.count(-1);
  }

  /** Removes the entry of one checkpoint, if any (the checkpoint is gone), from whichever list holds it. */
  forget(taskId: string, at: IndexPosition): void {
    this.tx.clear(this.key(taskId, at));
    this.tx.clear(this.olderKey(taskId, at));
  }

  /**
   * Removes every entry of a task (a purge): its range of the older list,
   * and its keys among the list's, found by reading the list's keys (the
   * indexer keeps the list short, `PENDING_LIMIT`).
   */
  async clearTask(taskId: string): Promise<void> {
    const older = this.byTask.range(taskId);
    this.tx.clearRange(older.begin, older.end);
    const { begin, end } = this.inOrder.range();
    for (let from = begin; ; ) {
      const rows = await this.tx.getRange(from, end, { limit: PURGE_PAGE });
      for (const row of rows) if (this.positionOf(row.key)[0] === taskId) this.tx.clear(row.key);
      if (rows.length < PURGE_PAGE) return;
      from = Buffer.concat([rows.at(-1)!.key, EMPTY_BYTE]);
    }
  }

  /** The tenant's mark cleared: the indexer found its list empty in this transaction. */
  settled(): void {
    this.tx.clear(systemKeyspace().termsDue.pack(this.tenant));
    // The list read empty, with a conflict range over it: a create that adds meanwhile makes this run again.
    if (this.tx.shared === true) this.tx.clear(systemKeyspace().termsPending.pack(this.tenant));
  }

  private write(key: Buffer, previous: IndexPosition | undefined, words: Iterable<string>, index: readonly DeferredEntry[]): void {
    // Positions, words and ids hold no line break (`indexes.ts` escapes paths): one line each.
    let text = previous === undefined ? '' : `${previous.createdAt} ${previous.checkpointId}`;
    for (const word of words) text += `\n${word}`;
    for (const entry of index) text += `\n${indexLine(entry)}`;
    this.tx.set(key, this.codec.encode(text, EMPTY));
  }

  private entryOf(row: KeyValue): PendingEntry {
    const [taskId, at] = this.positionOf(row.key);
    const text = decodeWith<string>(this.codec, row.value, EMPTY);
    const lines = text.split('\n');
    const head = lines[0]!;
    const space = head.indexOf(' ');
    // The words are gathered in place in the lines' own array (the head and index lines out): no second array an entry.
    const words = lines;
    let count = 0;
    const index: DeferredEntry[] = [];
    // Where the text's bytes start in the value, when it is ASCII (a byte a character), for the long words below.
    const bytes = Buffer.from(row.value.buffer, row.value.byteOffset, row.value.byteLength);
    const from = asciiStringAt(bytes, text.length);
    const ascii = from > 0;
    let end = head.length;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const start = end + 1;
      end = start + line.length;
      if (line.charCodeAt(0) === TAB) index.push(entryOfLine(line));
      // `split` makes a line of SLICE_MIN characters or more (every blinded word, most `file:` words) a slice of the
      // whole text, which each map of the merge hashes and compares by V8's slow path, and which keeps the text alive:
      // read from the bytes it is a string of its own (the merge thread's time a sealed checkpoint, issue 44).
      else words[count++] = ascii && line.length >= SLICE_MIN ? bytes.toString('latin1', from + start, from + end) : line;
    }
    words.length = count;
    return {
      taskId,
      at,
      previous: space < 0 ? undefined : { createdAt: head.slice(0, space), checkpointId: head.slice(space + 1) },
      words,
      index,
      key: row.key,
      bytes: row.value,
    };
  }

  /** Where an entry is written: the list in the order checkpoints were made. */
  private key(taskId: string, at: IndexPosition): Buffer {
    return this.inOrder.pack(at.createdAt, at.checkpointId, taskId);
  }

  /** Where format 4 wrote it. */
  private olderKey(taskId: string, at: IndexPosition): Buffer {
    return this.byTask.pack(taskId, at.createdAt, at.checkpointId);
  }
}

const TAB = 0x09;
/** The shortest part of a string V8 makes a slice of it rather than a copy (`SlicedString::kMinLength`). */
const SLICE_MIN = 13;
const NAMES: ReadonlySet<string> = new Set(INDEX_NAMES);

/**
 * An index entry as a line of an entry's text: a tab (no word starts with
 * one: words are letters and digits, `file:` paths, `sha256:` digests or
 * blinded `~` words), the index's name, `b` (blinded) or `p` (plain), a tab,
 * then the value with `%` and line breaks written `%25` and `%0A`.
 */
export function indexLine(entry: DeferredEntry): string {
  const value = entry.value.replace(/[%\n]/g, (c) => (c === '%' ? '%25' : '%0A'));
  return `\t${entry.name} ${entry.blind ? 'b' : 'p'}\t${value}`;
}

function entryOfLine(line: string): DeferredEntry {
  const tab = line.indexOf('\t', 1);
  const space = line.indexOf(' ');
  const name = line.slice(1, space);
  if (tab < 0 || space < 0 || space > tab || !NAMES.has(name)) throw new Error(`A pending entry holds an index line it cannot read (${JSON.stringify(line.slice(0, 40))}).`);
  const value = line.slice(tab + 1).replace(/%(25|0A)/g, (c) => (c === '%25' ? '%' : '\n'));
  return { name: name as IndexName, value, blind: line.charCodeAt(space + 1) === 0x62 };
}

/**
 * Where the bytes of an ASCII text of `length` characters start in `value`,
 * when `value` is that text as one MessagePack string (its head, then a
 * byte a character); 0 when it is not (a character beyond ASCII, a value
 * written another way).
 */
export function asciiStringAt(value: Buffer, length: number): number {
  const span = stringSpan(value, 0);
  if (span === undefined || span.end !== value.length || span.end - span.start !== length) return 0;
  return isAscii(value.subarray(span.start)) ? span.start : 0;
}

/** Appended to a key: the first key after it. */
const EMPTY_BYTE = Buffer.from([0x00]);

/**
 * Each tenant's count of full-text pending entries, where other processes
 * write the store (0 where none was kept): every create adds one in its
 * transaction and every merge takes away what it cleared in its own, so
 * at any version the count is the list's length (but for a checkpoint
 * removed before its merge, and entries an older build wrote: each
 * listing of the whole list puts it right, {@link PendingTermRows.recount}).
 * Read as a snapshot: the creates that add to it meanwhile do not make
 * the reader's transaction run again.
 */
export async function pendingCounts(tx: Transaction, tenants: readonly string[]): Promise<number[]> {
  const space = systemKeyspace().termsPending;
  return Promise.all(
    tenants.map(async (tenant) => {
      const key = space.pack(tenant);
      const [row] = await tx.getRange(key, Buffer.concat([key, EMPTY_BYTE]), { limit: 1, snapshot: true });
      return Number(decodeCounter(row?.value));
    }),
  );
}

/**
 * Up to `limit` tenants whose pending list may hold entries, after `after`,
 * in name order: those marked due, and where other processes write the
 * store those with a count (which marks them there; a mark an older build
 * wrote is still found).
 */
export async function tenantsWithPendingTerms(tx: Transaction, after: string | undefined, limit: number): Promise<string[]> {
  const { termsDue, termsPending } = systemKeyspace();
  const spaces = tx.shared === true ? [termsDue, termsPending] : [termsDue];
  const found = await Promise.all(
    spaces.map(async (space) => {
      const begin = after === undefined ? space.range().begin : space.range(after).end;
      const rows = await tx.getRange(begin, space.range().end, { limit });
      return rows.map((row) => space.unpack(row.key)[0] as string);
    }),
  );
  if (found.length === 1) return found[0]!;
  return [...new Set(found.flat())].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))).slice(0, limit);
}
