/**
 * Secondary indexes of checkpoints, maintained in the same transaction as the
 * record: one `update(old, new)` for insert, change and delete, clearing the
 * entries that no longer hold, and a newest-first scan for search. An entry is `(name, value, createdAt, id)` →
 * taskId, so a scan newest-first needs no second lookup to find the record.
 * A write may touch a dozen entries, so `update` packs each key from parts
 * made once per name and once per checkpoint. Full text and file paths are
 * indexed apart, as runs (`terms.ts`); the `file` entries of checkpoints
 * written before that are still read and cleared.
 *
 * @module
 */
import type { Checkpoint } from '../../domain/checkpoint.js';
import { sha256Hex } from '../../domain/hash.js';
import { IndexSpace, packString, packStringBetween, type Subspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';
import { decodeWith, type Codecs, type Sealing } from './codec.js';

export const INDEX_NAMES = ['all', 'task', 'agent', 'agentType', 'phase', 'status', 'finalStatus', 'label', 'file'] as const;
export type IndexName = (typeof INDEX_NAMES)[number];

/**
 * The indexes a create writes in its own transaction: `all` (time order, so
 * a scan of it finds every checkpoint, merged or not) and `task` (what a
 * write placed before its task's newest checkpoint reads). A new
 * checkpoint's other entries wait in the full-text pending list beside its
 * words until the indexer merges them (store format 7, `pending-terms.ts`):
 * each is a leaf of its own in a lone create's commit, where a merge writes
 * a batch of them together.
 */
const AT_CREATE: ReadonlySet<IndexName> = new Set(['all', 'task']);

/**
 * An index entry a new checkpoint left to the indexer: its name, and its value
 * as the key holds it (`blind`: a keyed HMAC, encryption at rest being on).
 */
export interface DeferredEntry {
  name: IndexName;
  value: string;
  blind: boolean;
}

/** The indexes whose values are a tenant's words: with encryption at rest their keys hold keyed HMACs of them. */
const BLIND: ReadonlySet<IndexName> = new Set(['agent', 'agentType', 'phase', 'label', 'file']);

/** Index values longer than this are indexed by their SHA-256, keeping keys short on every store. */
export const MAX_TERM_BYTES = 256;

/** The form of a filter value inside an index key; search uses the same function. */
export function indexTerm(value: string): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8: a short string needs no count (most words, on every create).
  return value.length * 3 <= MAX_TERM_BYTES || Buffer.byteLength(value) <= MAX_TERM_BYTES ? value : `sha256:${sha256Hex(value)}`;
}

/**
 * The `(name, value)` pairs a checkpoint is indexed under, values in their
 * index form. File paths are indexed as runs (`terms.ts`, {@link fileWordsOf});
 * `legacy` adds the `file` entries that releases before that wrote, for what
 * clears a checkpoint's entries.
 */
export function indexEntries(checkpoint: Checkpoint, legacy = false): [IndexName, string][] {
  const entries = rawEntries(checkpoint);
  if (legacy) entries.push(...legacyEntries(checkpoint));
  return entries.map(([name, value]) => [name, indexTerm(value)]);
}

function rawEntries(checkpoint: Checkpoint): [IndexName, string][] {
  const entries: [IndexName, string][] = [
    ['all', ''],
    ['task', checkpoint.taskId],
    ['agent', checkpoint.agentId],
    ['status', checkpoint.status],
  ];
  if (checkpoint.agentType) entries.push(['agentType', checkpoint.agentType]);
  if (checkpoint.executionState.phase) entries.push(['phase', checkpoint.executionState.phase]);
  if (checkpoint.finalStatus) entries.push(['finalStatus', checkpoint.finalStatus]);
  for (const [key, value] of Object.entries(checkpoint.labels)) entries.push(['label', labelTerm(key, value)]);
  return entries;
}

function legacyEntries(checkpoint: Checkpoint): [IndexName, string][] {
  return [...filePaths(checkpoint)].map((path) => ['file', path]);
}

/**
 * The run word of a file path (paths are indexed as runs beside the words of
 * `q`; labels stay index entries: a few values shared by many checkpoints,
 * such as `team=core`, would be common runs and scanned record by record):
 * the path in index form behind `file:`, which no word of text holds (words
 * are letters and digits), with `%`, space and line break written as `%25`,
 * `%20` and `%0A`, as the run lists (`terms.ts`) keep words on lines, apart
 * from a number. The pending entry's writer spells the same from a path's
 * characters (`EntryText`, `entry-text.ts`): a change here is made there too.
 */
export function fileWord(path: string): string {
  return `file:${indexTerm(path).replace(/[% \n]/g, (c) => (c === '%' ? '%25' : c === ' ' ? '%20' : '%0A'))}`;
}

/** A checkpoint's file paths as run words. */
export function fileWordsOf(checkpoint: Checkpoint): string[] {
  return [...filePaths(checkpoint)].map(fileWord);
}

export function labelTerm(key: string, value: string | number | boolean): string {
  return `${key}=${String(value)}`;
}

/** Every file path a checkpoint names: in its items and in `metrics.filesModified`. */
export function filePaths(checkpoint: Checkpoint): Set<string> {
  // Loops over the lists as they are: no joined copy of the items, no closure (a create calls this once or twice).
  const paths = new Set<string>();
  const state = checkpoint.executionState;
  addItemPaths(state.completedItems, paths);
  addItemPaths(state.pendingItems, paths);
  addItemPaths(state.blockedItems, paths);
  addPaths(checkpoint.metrics.filesModified, paths);
  return paths;
}

type Items = Checkpoint['executionState']['completedItems'];

function addItemPaths(items: Items, paths: Set<string>): void {
  if (!items) return;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (typeof item !== 'object' || !item.files) continue;
    addPaths(item.files.created, paths);
    addPaths(item.files.modified, paths);
    addPaths(item.files.deleted, paths);
  }
}

function addPaths(refs: readonly unknown[] | undefined, paths: Set<string>): void {
  if (!refs) return;
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i];
    if (typeof ref === 'string') paths.add(ref);
    else if (ref && typeof ref === 'object' && typeof (ref as { path?: unknown }).path === 'string') paths.add((ref as { path: string }).path);
  }
}

/** One index entry: a checkpoint indexed under the scanned value. */
export interface IndexHit {
  createdAt: string;
  checkpointId: string;
  taskId: string;
}

/** Where a scan resumes: the entry after (older than) this one. */
export interface IndexPosition {
  createdAt: string;
  checkpointId: string;
}

export interface IndexScan {
  /** Only entries created at or after this time. */
  from?: string;
  /** Only entries created at or before this time (inclusive, whatever id follows). */
  to?: string;
  /** Only entries older than this one (exclusive). */
  before?: IndexPosition;
  /** Only this entry and older ones (inclusive); not with `before`. */
  atOrBefore?: IndexPosition;
  limit: number;
}

/** The secondary indexes of one tenant, inside one transaction. */
export class IndexRows {
  /** This index subspace's frames, shared by every `IndexRows` over it ({@link framesOf}). */
  private frames: Partial<Record<IndexName, Frame>> | undefined;

  constructor(
    private readonly tx: Transaction,
    private readonly index: Subspace,
    private readonly codecs: Codecs,
    private readonly sealing: Sealing | undefined,
  ) {}

  /** Brings the index from `before`'s entries to `after`'s; either may be absent. */
  update(before: Checkpoint | undefined, after: Checkpoint | undefined): void {
    if (before === undefined) {
      if (after !== undefined) this.insert(after);
      return;
    }
    if (after === undefined || after.id !== before.id || after.createdAt !== before.createdAt) {
      const suffix = entrySuffix(before);
      for (const [name, value] of indexEntries(before, true)) this.tx.clearBlind(this.key(name, value, suffix));
      if (after !== undefined) this.insert(after);
      return;
    }
    // A change keeps the id and the creation time, so entries differ by (name, value) alone. A path it
    // drops may have an entry an earlier release wrote: cleared; one it gains is a run (`terms.ts`).
    const old = new Map(indexEntries(before, true).map((entry) => [entryId(entry), entry]));
    const next = new Map(indexEntries(after, true).map((entry) => [entryId(entry), entry]));
    const suffix = entrySuffix(after);
    for (const [id, [name, value]] of old) if (!next.has(id)) this.tx.clearBlind(this.key(name, value, suffix));
    let taskId: Buffer | undefined;
    for (const [id, [name, value]] of next) {
      if (old.has(id) || name === 'file') continue;
      this.tx.setBlind(this.key(name, value, suffix), (taskId ??= this.codecs.index.encode(after.taskId, EMPTY)));
    }
  }

  /**
   * A new checkpoint, the task's newest: its `all` and `task` entries are
   * written now; the others are answered, for the pending list, and written by
   * the indexer's merge ({@link writeDeferred}).
   */
  insertNew(checkpoint: Checkpoint): DeferredEntry[] {
    const suffix = entrySuffix(checkpoint);
    const taskId = this.codecs.index.encode(checkpoint.taskId, EMPTY);
    const deferred: DeferredEntry[] = [];
    for (const [name, value] of indexEntries(checkpoint)) {
      if (AT_CREATE.has(name)) this.tx.setBlind(this.key(name, value, suffix), taskId);
      else deferred.push(this.deferred(name, value));
    }
    return deferred;
  }

  /** The entries a checkpoint waiting in the pending list has the indexer write: all but `all` and `task`. */
  deferredOf(checkpoint: Checkpoint): DeferredEntry[] {
    return indexEntries(checkpoint)
      .filter(([name]) => !AT_CREATE.has(name))
      .map(([name, value]) => this.deferred(name, value));
  }

  /**
   * Writes the entries a merged checkpoint left to the indexer. One written
   * plain before encryption was on is blinded now, as its key is spelled.
   */
  writeDeferred(taskId: string, at: IndexPosition, entries: readonly DeferredEntry[]): void {
    if (entries.length === 0) return;
    const suffix = Buffer.concat([packString(at.createdAt), packString(at.checkpointId)]);
    const value = this.codecs.index.encode(taskId, EMPTY);
    for (const entry of entries) this.tx.set(this.key(entry.name, IndexRows.spelled(entry, this.sealing).value, suffix, false), value);
  }

  /** A deferred entry as this tenant spells it now: one written plain before encryption was on is blinded. */
  static spelled(entry: DeferredEntry, sealing: Sealing | undefined): DeferredEntry {
    return entry.blind || sealing === undefined || !BLIND.has(entry.name) ? entry : { name: entry.name, value: sealing.blind(entry.value), blind: true };
  }

  /** Which deferred entries a scan of `(name, value)` (in index form) would find once merged; the value is blinded once, not per entry. */
  finds(name: IndexName, value: string): (entry: DeferredEntry) => boolean {
    const blinded = this.sealing === undefined || !BLIND.has(name) ? undefined : this.sealing.blind(value);
    return (entry) => entry.name === name && entry.value === (entry.blind ? blinded : value);
  }

  /** Whether scans of this index find every checkpoint as soon as it is created (the others wait for the merge). */
  static writtenAtCreate(name: IndexName): boolean {
    return AT_CREATE.has(name);
  }

  private deferred(name: IndexName, value: string): DeferredEntry {
    const blind = this.sealing !== undefined && BLIND.has(name);
    return { name, value: blind ? this.sealing!.blind(value) : value, blind };
  }

  /** Writes every entry of a new checkpoint: nothing to compare against, nothing to clear. */
  private insert(checkpoint: Checkpoint, entries = indexEntries(checkpoint)): void {
    const suffix = entrySuffix(checkpoint);
    const taskId = this.codecs.index.encode(checkpoint.taskId, EMPTY);
    for (const [name, value] of entries) this.tx.setBlind(this.key(name, value, suffix), taskId);
  }

  /**
   * Moves a checkpoint's entries to `to` (the same tenant, blinded; a
   * re-blinding pass): its current entries, and the `file` entries an
   * earlier release wrote, where they exist, so a checkpoint found by them
   * before is found after.
   */
  async moveTo(to: IndexRows, checkpoint: Checkpoint): Promise<void> {
    const suffix = entrySuffix(checkpoint);
    const kept: [IndexName, string][] = [];
    for (const entry of indexEntries(checkpoint, true)) {
      const key = this.key(entry[0], entry[1], suffix);
      if (entry[0] === 'file' && (await this.tx.get(key)) === undefined) continue;
      kept.push(entry);
      this.tx.clearBlind(key);
    }
    to.insert(checkpoint, kept);
  }

  /** The key `(name, value, createdAt, id)`, byte for byte what `index.pack` makes, from parts packed once; `value` blinded here unless `spelled`. */
  private key(name: IndexName, value: string, suffix: Buffer, spell = true): Buffer {
    const { prefix, infix } = ((this.frames ??= framesOf(this.index))[name] ??= frameOf(this.index, name));
    return packStringBetween(prefix, spell ? this.keyValue(name, value) : value, infix.length === 0 ? suffix : Buffer.concat([infix, suffix]));
  }

  /** `value` as index keys hold it: blinded where it is a tenant's words and encryption is on. */
  private keyValue(name: IndexName, value: string): string {
    return this.sealing !== undefined && BLIND.has(name) ? this.sealing.blind(value) : value;
  }

  /** Entries of `(name, value)`, newest first; `value` in its index form ({@link indexTerm}). */
  async scan(name: IndexName, word: string, scan: IndexScan): Promise<IndexHit[]> {
    const value = this.keyValue(name, word);
    const bounds = this.index.range(name, value);
    const begin = scan.from !== undefined ? this.index.pack(name, value, scan.from) : bounds.begin;
    let end = scan.to !== undefined ? this.index.range(name, value, scan.to).end : bounds.end;
    if (scan.before !== undefined) end = this.index.pack(name, value, scan.before.createdAt, scan.before.checkpointId);
    if (scan.atOrBefore !== undefined) end = Buffer.concat([this.index.pack(name, value, scan.atOrBefore.createdAt, scan.atOrBefore.checkpointId), AFTER]);
    const rows = await this.tx.getRange(begin, end, { limit: scan.limit, reverse: true });
    return rows.map((row) => {
      const [, , createdAt, checkpointId] = this.index.unpack(row.key) as [string, string, string, string];
      return { createdAt, checkpointId, taskId: decodeWith<string>(this.codecs.index, row.value, EMPTY) };
    });
  }
}

/** The packed `(createdAt, id)` that ends every index key of a checkpoint. */
function entrySuffix(checkpoint: Checkpoint): Buffer {
  return Buffer.concat([packString(checkpoint.createdAt), packString(checkpoint.id)]);
}

/** One string per `(name, value)`: names hold no NUL, so the two cannot run together. */
function entryId([name, value]: [IndexName, string]): string {
  return `${name}\u0000${value}`;
}

/** Index values are task ids, kept plain: nothing to bind. */
const EMPTY = Buffer.alloc(0);

/** Appended to a key: the first key after it (no index key extends another). */
const AFTER = Buffer.from([0x00]);

/** An entry of one index is `prefix ‖ value ‖ infix ‖ (createdAt, checkpointId)` ({@link IndexSpace}); the infix is empty but for the `task` layout's `task` index. */
type Frame = { prefix: Buffer; infix: Buffer };

/** Each index subspace's packed frames by name, made once per tenant's subspace and name. */
const frameCache = new WeakMap<Subspace, Partial<Record<IndexName, Frame>>>();

function framesOf(index: Subspace): Partial<Record<IndexName, Frame>> {
  let frames = frameCache.get(index);
  if (frames === undefined) frameCache.set(index, (frames = {}));
  return frames;
}

/** The frame of `name`'s entries; made by name, so an unknown layout refuses only the `task` index. */
function frameOf(index: Subspace, name: IndexName): Frame {
  return index instanceof IndexSpace ? index.frame(name) : { prefix: index.pack(name), infix: EMPTY };
}
