/**
 * The pending list of the full-text index (`q`), as PostgreSQL's GIN
 * `fastupdate` keeps one: a create does not update the word runs
 * (`terms.ts`) in its own transaction; it appends its checkpoint's words to
 * the list, one small key, and the indexer (`service/indexer/`) merges the
 * list into the runs in batches, a task's pending checkpoints together.
 * Search reads the runs and the list, so a checkpoint is found by `q` the
 * moment its create commits.
 *
 * `pendingTerms (taskId, createdAt, checkpointId)` → the position of the
 * task's newest checkpoint before it (where the runs its words end close),
 * then its words as the index keys hold them, one a line. A task's entries
 * sort in its order, which is the order they merge in. Beside it, the system
 * space `termsDue (tenant)` marks a tenant with entries, so the indexer finds
 * them without walking every tenant; the indexer clears the mark in the
 * transaction that finds the list empty, so a create that adds an entry
 * meanwhile conflicts with it and the mark stays.
 *
 * @module
 */
import { systemKeyspace, type Subspace, type ValueCodec } from '../../store/keyspace.js';
import type { KeyValue, Transaction } from '../../store/store.js';
import { decodeWith } from './codec.js';
import type { IndexPosition } from './indexes.js';

/** One checkpoint waiting to be merged into the word runs. */
export interface PendingEntry {
  taskId: string;
  at: IndexPosition;
  /** The task's newest checkpoint before this one when it was created; undefined for a task's first. */
  previous: IndexPosition | undefined;
  words: string[];
  /** The stored value it was read from. */
  bytes: Uint8Array;
}

const EMPTY = Buffer.alloc(0);

export class PendingTermRows {
  /** Whether this transaction added an entry (the indexer is poked once it commits). */
  added = false;

  constructor(
    private readonly tx: Transaction,
    private readonly tenant: string,
    private readonly space: Subspace,
    private readonly codec: ValueCodec,
  ) {}

  /** Appends a new checkpoint's words; `previous`: the task's newest before it. */
  add(taskId: string, at: IndexPosition, previous: IndexPosition | undefined, words: Iterable<string>): void {
    this.write(taskId, at, previous, words);
    this.added = true;
    // Blind: every create of the tenant sets it, and none reads it (the indexer reads it in a transaction of its own).
    this.tx.setBlind(systemKeyspace().termsDue.pack(this.tenant), EMPTY);
  }

  /** The entry of one checkpoint, if it is still waiting. */
  async get(taskId: string, at: IndexPosition): Promise<PendingEntry | undefined> {
    const key = this.key(taskId, at);
    const value = await this.tx.get(key);
    return value === undefined ? undefined : this.entryOf({ key, value });
  }

  /**
   * A listed entry as it is now: the same when its stored value is (a point
   * read, no decoding), rewritten when its checkpoint changed since,
   * undefined when it is gone (the checkpoint compacted or purged).
   */
  async current(listed: PendingEntry): Promise<PendingEntry | undefined> {
    const key = this.key(listed.taskId, listed.at);
    const value = await this.tx.get(key);
    if (value === undefined) return undefined;
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).equals(listed.bytes) ? listed : this.entryOf({ key, value });
  }

  /** Replaces a waiting checkpoint's words (it was updated before it merged). */
  rewrite(entry: PendingEntry, words: Iterable<string>): void {
    this.write(entry.taskId, entry.at, entry.previous, words);
  }

  /** Up to `limit` entries as stored, in key order (for the merge thread, which decodes them itself). */
  async rows(limit: number): Promise<KeyValue[]> {
    const { begin, end } = this.space.range();
    return this.tx.getRange(begin, end, { limit });
  }

  /** The task and position an entry's key names. */
  positionOf(key: Buffer): [taskId: string, at: IndexPosition] {
    const [taskId, createdAt, checkpointId] = this.space.unpack(key) as [string, string, string];
    return [taskId, { createdAt, checkpointId }];
  }


  /** Up to `limit` entries in key order (task, then the task's order), after `after` when given. */
  async list(limit: number, after?: Buffer): Promise<{ entries: PendingEntry[]; last: Buffer | undefined }> {
    const { begin, end } = this.space.range();
    const from = after === undefined ? begin : Buffer.concat([after, Buffer.from([0])]);
    const rows = await this.tx.getRange(from, end, { limit });
    return { entries: rows.map((row) => this.entryOf(row)), last: rows.at(-1)?.key };
  }

  /** Removes a merged entry. */
  remove(entry: PendingEntry): void {
    this.tx.clear(this.key(entry.taskId, entry.at));
  }

  /** Removes the entry of one checkpoint, if any (the checkpoint is gone). */
  forget(taskId: string, at: IndexPosition): void {
    this.tx.clear(this.key(taskId, at));
  }

  /** Removes every entry of a task (a purge). */
  clearTask(taskId: string): void {
    const { begin, end } = this.space.range(taskId);
    this.tx.clearRange(begin, end);
  }

  /** The tenant's mark cleared: the indexer found its list empty in this transaction. */
  settled(): void {
    this.tx.clear(systemKeyspace().termsDue.pack(this.tenant));
  }

  private write(taskId: string, at: IndexPosition, previous: IndexPosition | undefined, words: Iterable<string>): void {
    const key = this.key(taskId, at);
    // Positions, words and ids hold no line break (`indexes.ts` escapes paths): one line each.
    let text = previous === undefined ? '' : `${previous.createdAt} ${previous.checkpointId}`;
    for (const word of words) text += `\n${word}`;
    this.tx.set(key, this.codec.encode(text, EMPTY));
  }

  private entryOf(row: KeyValue): PendingEntry {
    const [taskId, createdAt, checkpointId] = this.space.unpack(row.key) as [string, string, string];
    const lines = decodeWith<string>(this.codec, row.value, EMPTY).split('\n');
    const head = lines[0]!;
    const space = head.indexOf(' ');
    return {
      taskId,
      at: { createdAt, checkpointId },
      previous: space < 0 ? undefined : { createdAt: head.slice(0, space), checkpointId: head.slice(space + 1) },
      words: lines.slice(1),
      bytes: row.value,
    };
  }

  private key(taskId: string, at: IndexPosition): Buffer {
    return this.space.pack(taskId, at.createdAt, at.checkpointId);
  }
}

/** Up to `limit` tenants whose pending list may hold entries, after `after`, in name order. */
export async function tenantsWithPendingTerms(tx: Transaction, after: string | undefined, limit: number): Promise<string[]> {
  const space = systemKeyspace().termsDue;
  const begin = after === undefined ? space.range().begin : space.range(after).end;
  const rows = await tx.getRange(begin, space.range().end, { limit });
  return rows.map((row) => space.unpack(row.key)[0] as string);
}
