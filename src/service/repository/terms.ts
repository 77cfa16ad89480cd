/**
 * The full-text index (`q`) as runs. A task's checkpoints, in the order of
 * its `task` index (createdAt, then id; createdAt rises strictly along a
 * task), mostly repeat the words of the one before: an agent's next
 * checkpoint carries most of the last one's items and decisions. So a word
 * is indexed per task as runs of consecutive checkpoints that hold it:
 * `terms (word, taskId, startAt, startId)` → the run's last position, or
 * `[]` while the run is open (it reaches the task's newest checkpoint). A
 * create writes only the words that start or stop with it; the task's open
 * words, `openTerms (taskId)`, tell which those are. A key per (word,
 * checkpoint) made the index two thirds of the store and ninety writes per
 * create; runs make it a few keys per create.
 *
 * Runs may cover more than holds the word, never less: every checkpoint
 * holding a word lies in one of its runs (and is there when a run of it
 * starts), but a checkpoint compacted away, purged, or changed to drop the
 * word may still lie inside one. Search checks each record's own words, as
 * it always did, so a stale run costs a read, never a wrong result; and a
 * run's start and last are the task's checkpoints, as created. Each run is
 * also listed under its task, `taskTerms (taskId, startAt, startId, word)`,
 * so a purge and a re-blinding pass find a task's runs without reading the
 * records.
 *
 * @module
 */
import type { Checkpoint } from '../../domain/checkpoint.js';
import { termsOf } from '../../domain/terms.js';
import type { Subspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';
import { decodeWith, type Codecs, type Sealing } from './codec.js';
import { indexTerm, type IndexPosition } from './indexes.js';

/** One run of a word in one task: `last` undefined while it is open. */
export interface TermRun {
  taskId: string;
  start: IndexPosition;
  last: IndexPosition | undefined;
}

/** One entry of a task's list of runs. */
export interface TaskRun {
  start: IndexPosition;
  word: string;
}

const positionOf = (checkpoint: Checkpoint): IndexPosition => ({ createdAt: checkpoint.createdAt, checkpointId: checkpoint.id });

export class TermRows {
  constructor(
    private readonly tx: Transaction,
    private readonly spaces: { terms: Subspace; taskTerms: Subspace; openTerms: Subspace },
    private readonly codecs: Codecs,
    private readonly sealing: Sealing | undefined,
  ) {}

  /** A checkpoint's words as the index keys hold them: in index form, blinded when encryption is on. */
  wordsOf(checkpoint: Checkpoint): Set<string> {
    const words = new Set<string>();
    for (const term of termsOf(checkpoint)) words.add(this.word(term));
    return words;
  }

  /** A query word as the index keys hold it. */
  word(term: string): string {
    const form = indexTerm(term);
    return this.sealing === undefined ? form : this.sealing.blind(form);
  }

  /**
   * A new checkpoint, the task's newest, after `previous` (the newest before
   * it, absent for the task's first): its words that the previous one lacked
   * open runs, and the runs of the previous one's words it lacks end there.
   */
  async append(checkpoint: Checkpoint, previous: IndexPosition | undefined): Promise<void> {
    const { taskId } = checkpoint;
    const words = this.wordsOf(checkpoint);
    const open = previous === undefined ? [] : await this.openWords(taskId);
    const kept = new Set<string>();
    for (const word of open) {
      if (words.has(word)) kept.add(word);
      else this.tx.set(this.runKey(word, taskId, await this.openStart(word, taskId, previous!)), this.lastValue(previous!));
    }
    const start = positionOf(checkpoint);
    for (const word of words) if (!kept.has(word)) this.startRun(word, taskId, start, OPEN);
    if (kept.size !== open.length || kept.size !== words.size) this.writeOpenWords(taskId, words);
  }

  /**
   * A checkpoint's words changed (an update keeps its place). A gained word
   * starts a run of its own there (open when the checkpoint is the task's
   * newest); a lost word's run is left to cover it, except that the newest
   * checkpoint's words are the open ones, so there it ends.
   */
  async change(before: Checkpoint, after: Checkpoint, newest: boolean): Promise<void> {
    const was = this.wordsOf(before);
    const now = this.wordsOf(after);
    const gained = [...now].filter((word) => !was.has(word));
    const lost = newest ? [...was].filter((word) => !now.has(word)) : [];
    if (gained.length === 0 && lost.length === 0) return;
    const { taskId } = after;
    const at = positionOf(after);
    for (const word of lost) this.tx.set(this.runKey(word, taskId, await this.openStart(word, taskId, at)), this.lastValue(at));
    for (const word of gained) this.startRun(word, taskId, at, newest ? OPEN : this.lastValue(at));
    if (newest) this.writeOpenWords(taskId, now);
  }

  /**
   * Up to `limit` of a task's runs removed (a purge, page by page); the
   * task's open words go with its last. Returns how many were removed.
   */
  async clearTask(taskId: string, limit: number): Promise<number> {
    const { begin, end } = this.spaces.taskTerms.range(taskId);
    const rows = await this.tx.getRange(begin, end, { limit });
    for (const row of rows) {
      const { run } = this.taskRunOf(row.key);
      this.tx.clear(this.runKey(run.word, taskId, run.start));
      this.tx.clear(row.key);
    }
    if (rows.length < limit) this.tx.clear(this.spaces.openTerms.pack(taskId));
    return rows.length;
  }

  /** Moves one run, listed under its task, from its word's old spelling to `to` (a re-blinding pass). */
  async respell(taskId: string, run: TaskRun, to: string): Promise<void> {
    const from = this.runKey(run.word, taskId, run.start);
    const value = await this.tx.get(from);
    this.tx.clear(from);
    this.tx.clear(this.taskRunKey(taskId, run.start, run.word));
    if (value !== undefined) this.startRun(to, taskId, run.start, Buffer.from(value));
  }

  /** The task and run a `taskTerms` key lists. */
  taskRunOf(key: Buffer): { taskId: string; run: TaskRun } {
    const [taskId, createdAt, checkpointId, word] = this.spaces.taskTerms.unpack(key) as [string, string, string, string];
    return { taskId, run: { start: { createdAt, checkpointId }, word } };
  }

  /** The runs of `word` (as {@link word} makes it), in task order; undefined when there are more than `limit`. */
  async runs(word: string, limit: number): Promise<TermRun[] | undefined> {
    const { terms } = this.spaces;
    const { begin, end } = terms.range(word);
    const rows = await this.tx.getRange(begin, end, { limit: limit + 1 });
    if (rows.length > limit) return undefined;
    return rows.map((row) => {
      const [, taskId, createdAt, checkpointId] = terms.unpack(row.key) as [string, string, string, string];
      return { taskId, start: { createdAt, checkpointId }, last: lastOf(decodeWith<string[]>(this.codecs.terms, row.value, EMPTY)) };
    });
  }

  /** The words of a task's newest checkpoint, as its open runs are keyed. */
  async openWords(taskId: string): Promise<string[]> {
    const key = this.spaces.openTerms.pack(taskId);
    const value = await this.tx.get(key);
    return value === undefined ? [] : decodeWith<string[]>(this.codecs.openTerms, value, EMPTY);
  }

  /** Replaces the task's open words. */
  writeOpenWords(taskId: string, words: Iterable<string>): void {
    this.tx.set(this.spaces.openTerms.pack(taskId), this.codecs.openTerms.encode([...words], EMPTY));
  }

  private startRun(word: string, taskId: string, start: IndexPosition, value: Buffer): void {
    this.tx.set(this.runKey(word, taskId, start), value);
    this.tx.set(this.taskRunKey(taskId, start, word), EMPTY);
  }

  /** Where `word`'s open run in the task starts: its newest run at or before `at`. */
  private async openStart(word: string, taskId: string, at: IndexPosition): Promise<IndexPosition> {
    const { terms } = this.spaces;
    const { begin } = terms.range(word, taskId);
    const end = Buffer.concat([this.runKey(word, taskId, at), AFTER]);
    const [row] = await this.tx.getRange(begin, end, { limit: 1, reverse: true });
    // An open word always has its run; should it not, a run of the one checkpoint stands in for it.
    if (row === undefined) return at;
    const [, , createdAt, checkpointId] = terms.unpack(row.key) as [string, string, string, string];
    return { createdAt, checkpointId };
  }


  private runKey(word: string, taskId: string, start: IndexPosition): Buffer {
    return this.spaces.terms.pack(word, taskId, start.createdAt, start.checkpointId);
  }

  private taskRunKey(taskId: string, start: IndexPosition, word: string): Buffer {
    return this.spaces.taskTerms.pack(taskId, start.createdAt, start.checkpointId, word);
  }

  private lastValue(last: IndexPosition): Buffer {
    return this.codecs.terms.encode([last.createdAt, last.checkpointId], EMPTY);
  }
}

/** Orders positions as the index keys do, older first: createdAt, then id (ASCII both, so string order is byte order). */
export function comparePositions(a: IndexPosition, b: IndexPosition): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.checkpointId < b.checkpointId ? -1 : a.checkpointId > b.checkpointId ? 1 : 0;
}

function lastOf(value: string[]): IndexPosition | undefined {
  return value.length === 2 ? { createdAt: value[0]!, checkpointId: value[1]! } : undefined;
}

/** Run values hold positions and words hold ids or keyed hashes: nothing to bind. */
const EMPTY = Buffer.alloc(0);

/** Appended to a key: the first key after it. */
const AFTER = Buffer.from([0x00]);

/** The value of an open run: an empty MessagePack array. */
const OPEN = Buffer.from([0x90]);
