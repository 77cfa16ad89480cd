/**
 * Checkpoint records inside one transaction: the current version under
 * `(taskId, checkpointId)`, earlier versions under `(checkpointId, version)`,
 * the id → task map, the task's history in write order, and their indexes,
 * kept together so no caller can write one without the others.
 *
 * @module
 */
import type { Checkpoint } from '../../domain/checkpoint.js';
import { clearRecord, readRecord, writeNewRecord, writeRecord } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';
import type { IndexPosition, IndexRows } from './indexes.js';
import { comparePositions, type TermRows } from './terms.js';
import { InvariantError } from '../invariants.js';
import { decodeWith, rethrowMissingKey, type Codecs } from './codec.js';
import type { Keyspace } from './keyspace.js';
import type { ReadBudget } from './read-budget.js';
import { CheckpointDoc, verifyStored, type StoredCheckpoint } from './records.js';

/** A stored checkpoint that failed verification. */
export interface Corruption {
  checkpointId: string;
  taskId: string;
  version?: number;
  reason: string;
}

export type Loaded = { ok: true; doc: CheckpointDoc; raw: StoredCheckpoint } | { ok: false; corruption: Corruption };

/** An earlier version as stored; `raw` is undefined when its bytes do not decode. */
export interface RevisionEntry {
  version: number;
  raw: StoredCheckpoint | undefined;
}

export interface RevisionPage {
  entries: RevisionEntry[];
  done: boolean;
}

/** The most newer history entries a checkpoint inserted earlier moves up (`insertEarlier`): one transaction's worth. */
const MAX_MOVED = 1_000;

/** Keys one range read of revisions asks for. */
const REVISION_BATCH = 200;
/** Appended to a key: the first key after it. */
const AFTER = Buffer.from([0x00]);

function revisionEntry(codecs: Codecs, key: Buffer, version: number, parts: Buffer[]): RevisionEntry {
  try {
    return { version, raw: decodeWith<StoredCheckpoint>(codecs.revisions, parts.length === 1 ? parts[0]! : Buffer.concat(parts), key) };
  } catch (error) {
    rethrowMissingKey(error);
    return { version, raw: undefined };
  }
}

/** One entry of a task's history: its place in write order and the checkpoint. */
export interface HistoryEntry {
  seq: number;
  checkpointId: string;
}

export class CheckpointRows {
  constructor(
    private readonly tx: Transaction,
    private readonly ks: Keyspace,
    private readonly index: IndexRows,
    private readonly terms: TermRows,
    private readonly codecs: Codecs,
  ) {}

  /** The task a checkpoint belongs to, or undefined when the id is unknown to this tenant. */
  async taskOf(checkpointId: string): Promise<string | undefined> {
    const key = this.ks.ids.pack(checkpointId);
    const value = await this.tx.get(key);
    return value === undefined ? undefined : decodeWith<string>(this.codecs.ids, value, key);
  }

  /** The stored current version as it is, unverified; throws when it cannot be decoded. */
  raw(taskId: string, checkpointId: string): Promise<StoredCheckpoint | undefined> {
    return readRecord<StoredCheckpoint>(this.tx, this.ks.checkpoints, [taskId, checkpointId], this.codecs.checkpoints);
  }

  /** The current version, verified; undefined when absent. */
  async current(taskId: string, checkpointId: string): Promise<Loaded | undefined> {
    let raw: StoredCheckpoint | undefined;
    try {
      raw = await this.raw(taskId, checkpointId);
    } catch (error) {
      rethrowMissingKey(error);
      return { ok: false, corruption: { checkpointId, taskId, reason: 'unreadable record' } };
    }
    if (raw === undefined) return undefined;
    return verified(raw, { checkpointId, taskId });
  }

  /** Version `version`, current or earlier, verified; undefined when it never existed. */
  async version(taskId: string, checkpointId: string, version: number): Promise<Loaded | undefined> {
    const current = await this.current(taskId, checkpointId);
    if (current === undefined) return undefined;
    if (current.ok && current.doc.version === version) return current;
    let raw: StoredCheckpoint | undefined;
    try {
      raw = await this.revisionRaw(checkpointId, version);
    } catch (error) {
      rethrowMissingKey(error);
      return { ok: false, corruption: { checkpointId, taskId, version, reason: 'unreadable record' } };
    }
    if (raw === undefined) return current.ok ? undefined : current;
    return verified(raw, { checkpointId, taskId, version });
  }

  /** An earlier version as stored, unverified; throws when it cannot be decoded. */
  revisionRaw(checkpointId: string, version: number): Promise<StoredCheckpoint | undefined> {
    return readRecord<StoredCheckpoint>(this.tx, this.ks.revisions, [checkpointId, version], this.codecs.revisions);
  }

  /**
   * Earlier versions after `afterVersion` (from the first when absent),
   * ascending, at most `limit`, each read once from its own keys, in batches
   * while `budget` lasts; the first version is read whatever the budget, so
   * every page makes progress. `done` when no earlier version is left.
   */
  async revisionPage(checkpointId: string, afterVersion: number | undefined, limit: number, budget: ReadBudget): Promise<RevisionPage> {
    const space = this.ks.revisions;
    const end = space.range(checkpointId).end;
    let begin = afterVersion === undefined ? space.range(checkpointId).begin : space.range(checkpointId, afterVersion).end;
    const entries: RevisionEntry[] = [];
    // The chunks of the version being assembled; a split record's chunks may span two batches.
    let current: { version: number; parts: Buffer[] } | undefined;
    for (;;) {
      const room = entries.length === 0 ? REVISION_BATCH : Math.min(REVISION_BATCH, budget.keysLeft());
      // A version cut short by the budget is dropped here and read whole by the next page.
      if (room <= 0) return { entries, done: false };
      const rows = await this.tx.getRange(begin, end, { limit: room });
      for (const row of rows) {
        const version = space.unpack(row.key)[1] as number;
        if (current !== undefined && current.version !== version) {
          entries.push(revisionEntry(this.codecs, space.pack(checkpointId, current.version), current.version, current.parts));
          current = undefined;
          if (entries.length >= limit) return { entries, done: false };
        }
        current ??= { version, parts: [] };
        current.parts.push(row.value);
      }
      if (rows.length < room) {
        if (current !== undefined) entries.push(revisionEntry(this.codecs, space.pack(checkpointId, current.version), current.version, current.parts));
        return { entries, done: true };
      }
      begin = Buffer.concat([rows[rows.length - 1]!.key, AFTER]);
    }
  }

  /** The stored hash of version 1 (current or a revision), or undefined when it is gone or unreadable. */
  async firstHash(taskId: string, checkpointId: string): Promise<string | undefined> {
    try {
      const current = await this.raw(taskId, checkpointId);
      if (current === undefined) return undefined;
      if (new CheckpointDoc(current).version === 1) return current.h;
      return (await this.revisionRaw(checkpointId, 1))?.h;
    } catch (error) {
      rethrowMissingKey(error);
      return undefined;
    }
  }

  /**
   * Writes a new checkpoint as entry `seq` of its task's history, with its id
   * and index entries. It must be the task's newest, created after the newest
   * before it, `previous` (the task head's `latestId` and `latestAt`).
   */
  async insert(checkpoint: Checkpoint, stored: StoredCheckpoint, seq: number, previous: IndexPosition | undefined, deferIndex = false): Promise<void> {
    if (previous !== undefined && comparePositions(previous, { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id }) >= 0) {
      throw new InvariantError(`a new checkpoint is placed after its task's newest (${checkpoint.createdAt} ${checkpoint.id} is not after ${previous.createdAt} ${previous.checkpointId})`);
    }
    writeNewRecord(this.tx, this.ks.checkpoints, [checkpoint.taskId, checkpoint.id], stored, this.codecs.checkpoints);
    const idKey = this.ks.ids.pack(checkpoint.id);
    this.tx.set(idKey, this.codecs.ids.encode(checkpoint.taskId, idKey));
    const historyKey = this.ks.history.pack(checkpoint.taskId, seq);
    this.tx.set(historyKey, this.codecs.history.encode(checkpoint.id, historyKey));
    if (deferIndex) this.terms.enqueue(checkpoint, previous, this.index.insertNew(checkpoint));
    else {
      this.index.update(undefined, checkpoint);
      this.terms.enqueue(checkpoint, previous, []);
    }
  }

  /**
   * Writes a checkpoint accepted before some of its task's checkpoints
   * (a write the queue held while other instances wrote the task): it keeps
   * the time its 202 promised, so it takes its place in the history by that
   * time, each newer entry moving up one slot (`seq`, the task's new history
   * length, is the top slot), and its words get runs of their own
   * (`TermRows.insertEarlier`). At most {@link MAX_MOVED} newer entries move;
   * past that it lands below the newest of them. Answers how many moved.
   */
  async insertEarlier(checkpoint: Checkpoint, stored: StoredCheckpoint, seq: number): Promise<number> {
    const position = { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id };
    const hits = await this.index.scan('task', checkpoint.taskId, { from: checkpoint.createdAt, limit: MAX_MOVED + 1 });
    const newer = new Set(hits.filter((hit) => comparePositions(hit, position) > 0).map((hit) => hit.checkpointId));
    const entries = newer.size === 0 ? [] : await this.history(checkpoint.taskId, Math.min(newer.size, MAX_MOVED));
    let moved = 0;
    for (const entry of entries) {
      if (!newer.has(entry.checkpointId)) break;
      const key = this.ks.history.pack(checkpoint.taskId, entry.seq + 1);
      this.tx.set(key, this.codecs.history.encode(entry.checkpointId, key));
      moved += 1;
    }
    writeNewRecord(this.tx, this.ks.checkpoints, [checkpoint.taskId, checkpoint.id], stored, this.codecs.checkpoints);
    const idKey = this.ks.ids.pack(checkpoint.id);
    this.tx.set(idKey, this.codecs.ids.encode(checkpoint.taskId, idKey));
    const historyKey = this.ks.history.pack(checkpoint.taskId, seq - moved);
    this.tx.set(historyKey, this.codecs.history.encode(checkpoint.id, historyKey));
    this.index.update(undefined, checkpoint);
    this.terms.insertEarlier(checkpoint);
    return moved;
  }

  /** Replaces the current version, keeping `beforeRaw` as an immutable revision; `newest`: it is the task's newest checkpoint. */
  async replace(before: Checkpoint, beforeRaw: StoredCheckpoint, after: Checkpoint, stored: StoredCheckpoint, newest: boolean): Promise<void> {
    writeNewRecord(this.tx, this.ks.revisions, [before.id, before.version], beforeRaw, this.codecs.revisions);
    await writeRecord(this.tx, this.ks.checkpoints, [before.taskId, before.id], stored, this.codecs.checkpoints);
    // Not merged yet, with entries left to the merge: the entry takes them as they are now, and the merge writes them.
    const waiting = await this.terms.pending.get(after.taskId, { createdAt: after.createdAt, checkpointId: after.id });
    if (waiting !== undefined && waiting.index.length > 0) this.terms.pending.rewrite(waiting, waiting.words, this.index.deferredOf(after));
    else this.index.update(before, after);
    await this.terms.change(before, after, newest);
  }

  /**
   * Removes a checkpoint for good: its current version, every earlier
   * version, its id, its history entry `seq` and its index entries. Lineage
   * rows are the links' own (`LinkRows.unlinkAll`), word runs the task's
   * (`TermRows.clearTask`).
   */
  remove(checkpoint: Checkpoint, seq: number): void {
    clearRecord(this.tx, this.ks.checkpoints, [checkpoint.taskId, checkpoint.id]);
    const revisions = this.ks.revisions.range(checkpoint.id);
    this.tx.clearRange(revisions.begin, revisions.end);
    this.tx.clear(this.ks.ids.pack(checkpoint.id));
    this.tx.clear(this.ks.history.pack(checkpoint.taskId, seq));
    this.index.update(checkpoint, undefined);
    this.terms.pending.forget(checkpoint.taskId, { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id });
  }

  /**
   * Compacts a checkpoint away: its current version, every earlier version and
   * its index entries go; its id (so reads answer 410, not 404), its history
   * slot and its lineage rows stay, so the lineage of what is kept still
   * reaches its root through it. Its word runs stay (`terms.ts`). Never the
   * task's newest checkpoint.
   */
  compact(checkpoint: Checkpoint): void {
    clearRecord(this.tx, this.ks.checkpoints, [checkpoint.taskId, checkpoint.id]);
    const revisions = this.ks.revisions.range(checkpoint.id);
    this.tx.clearRange(revisions.begin, revisions.end);
    this.index.update(checkpoint, undefined);
    this.terms.pending.forget(checkpoint.taskId, { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id });
  }

  /** What a compacted checkpoint left behind (its id and history slot), removed by a purge. */
  forget(taskId: string, checkpointId: string, seq: number): void {
    this.tx.clear(this.ks.ids.pack(checkpointId));
    this.tx.clear(this.ks.history.pack(taskId, seq));
  }

  /** Up to `limit` entries of a task's history, newest first, older than `beforeSeq` when given. */
  async history(taskId: string, limit: number, beforeSeq?: number): Promise<HistoryEntry[]> {
    const { begin, end } = this.ks.history.range(taskId);
    const upper = beforeSeq === undefined ? end : this.ks.history.pack(taskId, beforeSeq);
    const rows = await this.tx.getRange(begin, upper, { limit, reverse: true });
    return rows.map((row) => ({ seq: this.ks.history.unpack(row.key)[1] as number, checkpointId: decodeWith<string>(this.codecs.history, row.value, row.key) }));
  }
}

function verified(raw: StoredCheckpoint, where: Omit<Corruption, 'reason'>): Loaded {
  const result = verifyStored(raw);
  if (!result.ok) return { ok: false, corruption: { ...where, reason: result.reason } };
  return { ok: true, doc: result.doc, raw };
}
