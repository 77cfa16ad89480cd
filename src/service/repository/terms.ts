/**
 * The full-text index (`q`) as runs. A task's checkpoints, in the order of
 * its `task` index (createdAt, then id; createdAt rises strictly along a
 * task), mostly repeat the words of the one before: an agent's next
 * checkpoint carries most of the last one's items and decisions. So a word
 * is indexed per task as runs of consecutive checkpoints that hold it:
 * `terms (word, taskId, startAt, startId)` → the run's last position, or
 * `[]` while the run is open (it reaches the task's newest checkpoint). A
 * create writes only the words that start or stop with it; the task's open
 * runs, `openTerms (taskId)` (each word of its newest checkpoint and where
 * its run starts), tell which those are. A key per (word,
 * checkpoint) made the index two thirds of the store and ninety writes per
 * create; runs make it a few keys per create.
 *
 * Runs may cover more than holds the word, never less: every checkpoint
 * holding a word lies in one of its runs (and is there when a run of it
 * starts), but a checkpoint compacted away, purged, or changed to drop the
 * word may still lie inside one. Search checks each record's own words, as
 * it always did, so a stale run costs a read, never a wrong result; and a
 * run's start and last are the task's checkpoints, as created. Where runs
 * start is also listed under the task, `taskTerms (taskId, startAt, startId)`
 * → the words whose runs start there, so a purge and a re-blinding pass find
 * a task's runs without reading the records.
 *
 * File paths repeat along a task as words do, and are indexed the same way,
 * as the words `file:PATH` (`fileWord` in `indexes.ts`), which no word of
 * text can be.
 *
 * @module
 */
import type { Checkpoint } from '../../domain/checkpoint.js';
import { termsOf } from '../../domain/terms.js';
import { keyLayout, packStringBetween, Subspace } from '../../store/keyspace.js';
import { keyspaceOf } from './keyspace.js';
import type { KeyValue, Transaction } from '../../store/store.js';
import { decodeWith, type Codecs, type Sealing } from './codec.js';
import { indexTerm, filePaths, fileWord, fileWordsOf, IndexRows, type DeferredEntry, type IndexPosition } from './indexes.js';
import { ENTRY_TEXT } from './entry-text.js';
import { KeptValues } from './kept-values.js';
import { endedBefore, markedEnded, openRunsOf, openRunsText } from './open-runs.js';
import { PendingTermRows, type PendingEntry } from './pending-terms.js';

/**
 * Word runs kept in a store apart from the transaction's (`indexer/runs-apart.ts`):
 * the runs the indexer's merges opened, read beside the transaction's own at
 * the store's latest commit. Only ever later than the transaction's snapshot,
 * which a search relies on: a checkpoint gone from the pending list it read
 * has its runs apart already.
 */
export interface RunsApart {
  get(key: Buffer): Promise<Buffer | undefined>;
  getRange(begin: Buffer, end: Buffer, limit: number): Promise<KeyValue[]>;
}

/** The open runs a merged checkpoint ends: the words it lacks (not stamped with its serial), and where each run starts. */
interface Ending {
  stamps: ReadonlyMap<string, number>;
  serial: number;
  words: string[];
  starts: IndexPosition[];
}

/** A word of the open runs that the checkpoint merged lacks: its run ends (a module function: see `open-runs.ts`'s callbacks). */
function pushEnding(this: Ending, start: IndexPosition, word: string): void {
  if (this.stamps.get(word) === this.serial) return;
  this.words.push(word);
  this.starts.push(start);
}

/** What {@link markEnded} needs: the starts whose first row of ends a merge wrote now, and the marks made for them. */
interface Marking {
  next: Map<string, IndexPosition>;
  /** Every start of the runs ended, by its text. */
  groups: ReadonlyMap<string, unknown>;
  /** The starts (objects) given a first row now, and their times. */
  firsts: Set<IndexPosition>;
  times: Set<string>;
  /** The marked position made for a start, by the object it replaces and by its text. */
  marks: Map<IndexPosition, IndexPosition>;
  texts: Map<string, IndexPosition>;
}

/**
 * Marks an open run whose start was given its first row of ends now: the
 * start's object itself, or another object of the same start not marked
 * yet (a module function: see `open-runs.ts`'s callbacks).
 */
function markEnded(this: Marking, start: IndexPosition, word: string): void {
  let mark = this.marks.get(start);
  if (mark === undefined) {
    if (!this.firsts.has(start) && !(this.times.has(start.createdAt) && !endedBefore(start) && this.groups.has(startText(start)))) return;
    const text = startText(start);
    mark = this.texts.get(text);
    if (mark === undefined) this.texts.set(text, (mark = markedEnded(start)));
    this.marks.set(start, mark);
  }
  this.next.set(word, mark);
}

/** Where a tenant's word runs are keyed (`tr`), for the runs kept apart (`indexer/runs-apart.ts`). */
export function runKeys(tenant: string): RunKeys {
  // Made once a tenant: each merge batch asks, and its closures made afresh each time were optimized afresh each time.
  let keys = RUN_KEYS.get(tenant);
  if (keys === undefined) {
    if (RUN_KEYS.size >= RUN_KEYS_KEPT) RUN_KEYS.clear();
    keys = runKeysOf(tenant);
    RUN_KEYS.set(tenant, keys);
  }
  return keys;
}

interface RunKeys {
  readonly begin: Buffer;
  readonly end: Buffer;
  has(key: Buffer): boolean;
  plain(key: Buffer): boolean;
}

/** Tenants whose run keys are kept made. */
const RUN_KEYS_KEPT = 1_024;
const RUN_KEYS = new Map<string, RunKeys>();

function runKeysOf(tenant: string): RunKeys {
  const { terms } = keyspaceOf(tenant);
  const { begin, end } = terms.range();
  const { prefix } = terms;
  return {
    begin,
    end,
    /** Whether `key` is one of the tenant's run keys. */
    has: (key) => key.length >= prefix.length && key.compare(prefix, 0, prefix.length, 0, prefix.length) === 0,
    /** Whether a run key's word is written plain, not blinded (`~`…). */
    plain: (key) => !(terms.unpack(key)[0] as string).startsWith('~'),
  };
}

/** One run of a word in one task: `last` undefined while it is open. */
export interface TermRun {
  taskId: string;
  start: IndexPosition;
  last: IndexPosition | undefined;
}

const positionOf = (checkpoint: Checkpoint): IndexPosition => ({ createdAt: checkpoint.createdAt, checkpointId: checkpoint.id });

/**
 * The open runs of the tasks written last, by their row's key, with the bytes
 * they were read from or written as. A task's next create reads back exactly
 * what its last one wrote (from the pending writes, then from LMDB), so the
 * text of a hundred lines need not be parsed again: a row whose bytes equal
 * the ones kept is the map kept; any other is decoded as ever. Bounded, a
 * map kept going at random when full (`kept-values.ts`: a merge goes round
 * every task with work, more of them than it keeps); a map kept here is
 * never changed.
 */
class OpenRunsCache {
  private readonly kept: KeptValues<{ bytes: Uint8Array; runs: ReadonlyMap<string, IndexPosition> }>;

  constructor(capacity: number) {
    this.kept = new KeptValues(capacity);
  }

  get(key: Buffer, bytes: Uint8Array): ReadonlyMap<string, IndexPosition> | undefined {
    const entry = this.kept.get(key.toString('latin1'));
    if (entry === undefined || !Buffer.from(entry.bytes.buffer, entry.bytes.byteOffset, entry.bytes.byteLength).equals(bytes)) return undefined;
    return entry.runs;
  }

  set(key: Buffer, bytes: Uint8Array, runs: ReadonlyMap<string, IndexPosition>): void {
    this.kept.set(key.toString('latin1'), { bytes, runs });
  }

  /** Takes `runs` out of the cache if it is the map kept under `key`: whether it was (no reader gets it from here on). */
  take(key: Buffer, runs: ReadonlyMap<string, IndexPosition>): boolean {
    const id = key.toString('latin1');
    if (this.kept.get(id)?.runs !== runs) return false;
    this.kept.delete(id);
    return true;
  }
}

/** About 10 KB a task (a hundred words and their starts): ~10 MB at most. */
const OPEN_RUNS = new OpenRunsCache(1024);

export class TermRows {
  /** The checkpoints whose words are not merged into the runs yet (`pending-terms.ts`). */
  readonly pending: PendingTermRows;
  /** The secondary indexes, where a merge writes the entries a create left to it. */
  private readonly index: IndexRows;
  /** Run keys this transaction removed, to clear apart once it has committed (`runs-apart.ts`). */
  readonly clearedApart: Buffer[] = [];
  /** The merge's stamps: each word of the checkpoint it merges, with the checkpoint's serial (`merge`); made by the first merge. */
  private stamps: Map<string, number> | undefined;
  private serial = 0;

  constructor(
    private readonly tx: Transaction,
    private readonly spaces: { terms: Subspace; runEnds: Subspace; taskTerms: Subspace; openTerms: Subspace; pendingTerms: Subspace; pendingList: Subspace; index: Subspace },
    private readonly codecs: Codecs,
    private readonly sealing: Sealing | undefined,
    tenant: string,
    /** The runs the indexer's merges opened, when kept apart. */
    private readonly apart?: RunsApart,
  ) {
    this.pending = new PendingTermRows(tx, tenant, spaces.pendingTerms, spaces.pendingList, codecs.pendingList);
    this.index = new IndexRows(tx, spaces.index, codecs, sealing);
  }

  /**
   * A checkpoint's words as the index keys hold them, in index form and
   * blinded when encryption is on: the words of its text, and its file paths
   * as `file:` words (`fileWord`).
   */
  wordsOf(checkpoint: Checkpoint): Set<string> {
    const terms = termsOf(checkpoint);
    // Plain, and no word long enough to be indexed by its hash (the common case): the terms are the words already.
    let words = terms;
    if (this.sealing !== undefined || !everyTermAsIs(terms)) {
      words = new Set<string>();
      for (const term of terms) words.add(this.word(term));
    }
    for (const tag of fileWordsOf(checkpoint)) words.add(this.word(tag));
    return words;
  }

  /** A query word, or a path as `fileWord` spells it, as the index keys hold it. */
  word(term: string): string {
    const form = indexTerm(term);
    return this.sealing === undefined ? form : this.sealing.blind(form);
  }

  /**
   * A new checkpoint, the task's newest, after `previous` (the newest before
   * it, absent for the task's first): its words, and the index entries its
   * create did not write (`IndexRows.insertNew`), wait in the pending list
   * (`pending-terms.ts`) until the indexer merges them ({@link merge}).
   */
  enqueue(checkpoint: Checkpoint, previous: IndexPosition | undefined, index: readonly DeferredEntry[]): void {
    const at = positionOf(checkpoint);
    // ASCII text is written as bytes, no string a word (`entry-text.ts`); what that way does not take, as strings.
    const blind = this.sealing?.words;
    const bytesWay = this.sealing === undefined || blind !== undefined;
    const written = bytesWay ? ENTRY_TEXT.write(checkpoint, previous, { paths: filePaths(checkpoint), word: (path) => this.word(fileWord(path)) }, index, blind) : undefined;
    if (written !== undefined) this.pending.addWritten(checkpoint.taskId, at, written);
    else this.pending.add(checkpoint.taskId, at, previous, this.wordsOf(checkpoint), index);
  }

  /**
   * Merges a task's pending checkpoints, in the task's order, into its runs,
   * and takes them off the list: each one's words that the one before it
   * lacked open runs, and the runs of the one before's words it lacks end
   * at the one before. The task's open runs are read and written once for
   * the lot, which is what makes a batch cheaper per checkpoint than a merge
   * of each alone. Point reads and writes only.
   */
  async merge(taskId: string, entries: readonly PendingEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // The task's open runs, changed in place checkpoint by checkpoint: the map kept for the task is taken out of the
    // cache before its first change (`takeOpenRuns`), and the map written goes back. A map made afresh for each merged
    // checkpoint was the largest garbage of the merge thread (issue 44).
    const stamps = (this.stamps ??= new Map());
    let open: Map<string, IndexPosition> = entries[0]!.previous === undefined ? new Map() : (await this.openRuns(taskId)) as Map<string, IndexPosition>;
    let owned = entries[0]!.previous === undefined;
    let changed = false;
    for (const entry of entries) {
      this.pending.remove(entry);
      this.index.writeDeferred(taskId, entry.at, entry.index);
      // A task's first checkpoint (again, after a purge) starts every run afresh.
      if (entry.previous === undefined && open.size > 0) {
        open = new Map();
        owned = true;
      }
      const at = entry.at;
      // This checkpoint's words, stamped with its serial: a word the open runs hold keeps its start, any other starts here.
      const serial = ++this.serial;
      let held = 0;
      let started: string[] | undefined;
      let startsAt: Buffer | undefined;
      for (const stored of entry.words) {
        const word = this.respelled(stored);
        if (stamps.get(word) === serial) continue;
        stamps.set(word, serial);
        held += 1;
        if (open.has(word)) continue;
        if (!owned) {
          open = this.takeOpenRuns(taskId, open);
          owned = true;
        }
        // A position merged for the first time: no run has ended under the task there.
        startsAt ??= this.runTail(taskId, at);
        this.tx.set(this.runKey(word, taskId, at, startsAt), OPEN);
        (started ??= []).push(word);
        open.set(word, at);
      }
      // Every open run this checkpoint lacks ends at the one before it; the runs that end together mostly started together.
      if (held < open.size) {
        if (!owned) {
          open = this.takeOpenRuns(taskId, open);
          owned = true;
        }
        // Found without iterating the map's entries, which made two objects an open word (~15 KB a merged checkpoint).
        const ending: Ending = { stamps, serial, words: [], starts: [] };
        open.forEach(pushEnding, ending);
        for (const word of ending.words) open.delete(word);
        if (endsGrouped()) await this.endTogether(taskId, ending, open, entry.previous!);
        else await this.endEach(taskId, ending, this.lastValue(entry.previous!));
        changed = true;
      }
      if (started !== undefined) {
        this.listStarts(taskId, at, started, []);
        changed = true;
      }
    }
    if (changed) this.writeOpenRuns(taskId, open);
  }

  /**
   * Ends the runs of `ending` (words of `open`) at `last`, the checkpoint
   * before the one merged: one row for the words whose runs started at the
   * same checkpoint (store format 10), rather than a key for each. The first
   * time runs of a start end, their row is `(taskId, startAt, startId, "")`,
   * found by a point read, as a key of each was: a search reads the end of
   * each of a word's runs that looks open, and a step's words come and go
   * together, so most starts end once. Runs of that start that end later
   * are a row for each later end, `(taskId, startAt, startId, "", lastAt,
   * lastId)`, read by a range after the first row. Each row holds the last
   * position and the words, a line each. The start's runs that stay open
   * are marked as having ended some (`open-runs.ts`), so the first row is
   * written once, blindly, as the others are (only the merge of the
   * checkpoint after `last` ends runs at `last`). `next`: the open runs after
   * this checkpoint, whose newly marked starts are replaced.
   */
  private async endTogether(taskId: string, ending: Ending, next: Map<string, IndexPosition>, last: IndexPosition): Promise<void> {
    // Words of one start share its position object, so they are gathered by it; the same start in two objects (a
    // change's) is then found by its text, made once an object rather than once a word.
    const byStart = new Map<IndexPosition, string[]>();
    for (let i = 0; i < ending.words.length; i++) {
      const word = ending.words[i]!;
      const start = ending.starts[i]!;
      const spelled = this.asIndexed(word) ? word : await this.openWord(word, taskId, start);
      const words = byStart.get(start);
      if (words === undefined) byStart.set(start, [spelled]);
      else words.push(spelled);
    }
    const groups = new Map<string, { start: IndexPosition; words: string[] }>();
    for (const [start, words] of byStart) {
      const text = startText(start);
      const group = groups.get(text);
      if (group === undefined) groups.set(text, { start, words });
      else group.words.push(...words);
    }
    let marking: Marking | undefined;
    for (const { start, words } of groups.values()) {
      const first = !endedBefore(start);
      const key = first ? this.endsRowKey(taskId, start) : this.spaces.runEnds.pack(taskId, start.createdAt, start.checkpointId, '', last.createdAt, last.checkpointId);
      this.rewriteEnds({ key, last, first }, words);
      if (!first) continue;
      marking ??= { next, groups, firsts: new Set(), times: new Set(), marks: new Map(), texts: new Map() };
      marking.firsts.add(start);
      marking.times.add(start.createdAt);
    }
    if (marking !== undefined) next.forEach(markEnded, marking);
  }

  /** Ends the runs of `ending` at `last` a key each, as store format 8 wrote them (the `spaces` layout). */
  private async endEach(taskId: string, ending: Ending, last: Buffer): Promise<void> {
    let endsOf: IndexPosition | undefined;
    let ends: Buffer | undefined;
    for (let i = 0; i < ending.words.length; i++) {
      const word = ending.words[i]!;
      const start = ending.starts[i]!;
      const spelled = this.asIndexed(word) ? word : await this.openWord(word, taskId, start);
      if (start !== endsOf) {
        endsOf = start;
        ends = this.endsHead(taskId, start);
      }
      this.close(spelled, taskId, start, last, ends);
    }
  }

  /**
   * The rows of ends a merge wrote together for runs of a task that start at
   * `start` ({@link endTogether}): none without the first, which is read
   * alone, so a start none of whose runs a merge ended costs a point read.
   */
  private async endedTogether(taskId: string, start: IndexPosition): Promise<EndsRow[]> {
    const key = this.endsRowKey(taskId, start);
    const value = await this.tx.get(key);
    if (value === undefined) return [];
    return [this.endsRow(key, value, true), ...(await this.laterEnds(taskId, start))];
  }

  /** The rows of ends written after the first one for runs of a task that start at `start`: the keys that extend the first's. */
  private async laterEnds(taskId: string, start: IndexPosition): Promise<EndsRow[]> {
    const { begin, end } = this.spaces.runEnds.range(taskId, start.createdAt, start.checkpointId, '');
    const rows = await this.tx.getRange(begin, end);
    return rows.map((row) => this.endsRow(row.key, row.value, false));
  }

  private endsRow(key: Buffer, value: Buffer, first: boolean): EndsRow {
    const [createdAt, checkpointId, ...words] = decodeWith<string>(this.codecs.runEnds, value, EMPTY).split('\n');
    return { key, last: { createdAt: createdAt!, checkpointId: checkpointId! }, first, words: words.length === 1 && words[0] === '' ? [] : words };
  }

  /** Writes a row of ends again with `words`; a later row left with none is cleared, the first kept (it says later rows may follow). */
  private rewriteEnds(row: Omit<EndsRow, 'words'>, words: readonly string[]): void {
    if (words.length === 0 && !row.first) this.tx.clear(row.key);
    else this.tx.set(row.key, this.codecs.runEnds.encode(`${row.last.createdAt}\n${row.last.checkpointId}\n${words.join('\n')}`, EMPTY));
  }

  /**
   * Takes `words` out of the rows of ends written together for runs that
   * start at `start`: their runs there were removed or opened again, and an
   * end left behind would cut a run opened again short.
   */
  private async unend(taskId: string, start: IndexPosition, words: ReadonlySet<string>): Promise<void> {
    for (const row of await this.endedTogether(taskId, start)) {
      const kept = row.words.filter((word) => !words.has(word));
      if (kept.length < row.words.length) this.rewriteEnds(row, kept);
    }
  }

  /** The key of the row of ends written together for runs of a task that start at `start`: before the start's own end keys. */
  private endsRowKey(taskId: string, start: IndexPosition): Buffer {
    return this.spaces.runEnds.pack(taskId, start.createdAt, start.checkpointId, '');
  }

  /**
   * Up to `limit` checkpoints waiting to be merged, in key order, for a search
   * to read beside the runs; undefined when there are more.
   */
  async waiting(limit: number): Promise<PendingEntry[] | undefined> {
    const { entries } = await this.pending.list(limit + 1);
    return entries.length > limit ? undefined : entries;
  }

  /** A word of a pending entry as the runs spell it now: written plain before encryption was on, it is blinded. */
  private respelled(word: string): string {
    return this.asIndexed(word) ? word : this.sealing!.blind(word);
  }

  /**
   * A checkpoint placed before its task's newest (`CheckpointRows.insertEarlier`):
   * each of its words gets a run of its own there, closed at once, so the
   * runs around it are left as they are (a run over it that lacks the word
   * already may cover more than holds the word; search checks each record).
   */
  insertEarlier(checkpoint: Checkpoint): void {
    const at = positionOf(checkpoint);
    const words = [...this.wordsOf(checkpoint)];
    const last = this.lastValue(at);
    for (const word of words) this.setRun(word, checkpoint.taskId, at, last);
    if (words.length > 0) this.listStarts(checkpoint.taskId, at, words, []);
  }

  /**
   * A checkpoint's words changed (an update keeps its place). A gained word
   * starts a run of its own there (open when the checkpoint is the task's
   * newest); a lost word's run is left to cover it, except that the newest
   * checkpoint's words are the open ones, so there it ends. A lost word's run
   * that covers this checkpoint alone goes, with its line in the task list:
   * a checkpoint changed a thousand times (a path stepped on each change)
   * leaves only the runs of what it holds.
   */
  async change(before: Checkpoint, after: Checkpoint, newest: boolean): Promise<void> {
    const was = this.wordsOf(before);
    const now = this.wordsOf(after);
    const gained = [...now].filter((word) => !was.has(word));
    const lost = [...was].filter((word) => !now.has(word));
    if (gained.length === 0 && lost.length === 0) return;
    const { taskId } = after;
    const at = positionOf(after);
    // Not merged yet: its entry in the pending list takes its words as they are now, and the runs wait for the merge.
    const waiting = await this.pending.get(taskId, at);
    if (waiting !== undefined) {
      this.pending.rewrite(waiting, now);
      return;
    }
    const listed = await this.startsAt(taskId, at);
    const starting = new Set(listed);
    const dropped = new Set<string>();
    for (const word of lost) {
      if (!starting.has(word)) continue;
      const key = this.runKey(word, taskId, at);
      const run = await this.runAt(key);
      if (run === undefined) continue;
      const ended = isOpen(run) ? await this.endOf(word, taskId, at) : lastOf(decodeWith<string[]>(this.codecs.terms, run, EMPTY));
      const last = ended ?? (newest ? at : undefined);
      if (last === undefined || comparePositions(last, at) !== 0) continue;
      this.clearRun(key);
      this.tx.clear(this.endKey(word, taskId, at));
      dropped.add(word);
    }
    // Ends a merge wrote together: none may stay for a run removed here, or for one opened here again (as `open` clears a
    // run's own end: a merge writes such rows only once a later checkpoint is merged, so this finds none today).
    if (endsGrouped() && (dropped.size > 0 || (newest && gained.length > 0))) await this.unend(taskId, at, new Set([...dropped, ...(newest ? gained : [])]));
    // A run that starts here already (the word was lost and is back) covers it: a run of one would cut it short.
    const fresh = gained.filter((word) => !starting.has(word));
    if (!newest) {
      for (const word of fresh) this.setRun(word, taskId, at, this.lastValue(at));
    } else {
      const open = new Map(await this.openRuns(taskId));
      for (const [word, start] of open) {
        if (now.has(word)) continue;
        if (!dropped.has(word)) this.close(await this.openWord(word, taskId, start), taskId, start, this.lastValue(at));
        open.delete(word);
      }
      for (const word of gained) {
        this.open(word, taskId, at);
        open.set(word, at);
      }
      this.writeOpenRuns(taskId, open);
    }
    if (fresh.length > 0 || dropped.size > 0) this.listStarts(taskId, at, fresh, listed.filter((word) => !dropped.has(word)));
  }

  /**
   * Some of a task's runs removed (a purge, page by page): the runs of up to
   * `limit` of the positions where runs start, while `allows` says another
   * position's clears fit the transaction (the first is always cleared); the
   * task's open runs go with the last. `done` once none is left.
   */
  async clearTask(taskId: string, limit: number, allows: (bytes: number) => boolean = () => true): Promise<{ cleared: number; done: boolean }> {
    // First, so that the indexer has nothing of the task left to merge behind the purge.
    await this.pending.clearTask(taskId);
    const { begin, end } = this.spaces.taskTerms.range(taskId);
    const rows = await this.tx.getRange(begin, end, { limit });
    let cleared = 0;
    for (const row of rows) {
      const { start, words } = this.startsOf(row.key, row.value);
      // A clear costs about twice its key (FoundationDB's count): the row's and each run's.
      if (cleared > 0 && !allows(2 * row.key.length * (words.length + 1))) return { cleared, done: false };
      for (const word of words) this.clearRun(this.runKey(word, taskId, start));
      this.tx.clear(row.key);
      cleared += 1;
    }
    if (rows.length < limit) {
      this.tx.clear(this.spaces.openTerms.pack(taskId));
      const ends = this.spaces.runEnds.range(taskId);
      this.tx.clearRange(ends.begin, ends.end);
    }
    return { cleared, done: rows.length < limit };
  }

  /**
   * The runs that start at one position of a task, listed in a `taskTerms`
   * row, moved to the spelling `spell` gives each word (a re-blinding pass);
   * words it leaves alone stay.
   */
  async respell(key: Buffer, value: Buffer, spell: (word: string) => string | undefined): Promise<void> {
    const { taskId, start, words } = this.startsOf(key, value);
    const moved = words.map((word) => spell(word) ?? word);
    if (moved.every((word, i) => word === words[i])) return;
    for (const row of await this.endedTogether(taskId, start)) {
      const respelled = row.words.map((word) => spell(word) ?? word);
      if (respelled.some((word, i) => word !== row.words[i])) this.rewriteEnds(row, respelled);
    }
    for (const [i, word] of words.entries()) {
      if (moved[i] === word) continue;
      const from = this.runKey(word, taskId, start);
      const run = await this.runAt(from);
      this.clearRun(from);
      if (run !== undefined) this.tx.set(this.runKey(moved[i]!, taskId, start), Buffer.from(run));
      const endFrom = this.endKey(word, taskId, start);
      const end = await this.tx.get(endFrom);
      this.tx.clear(endFrom);
      if (end !== undefined) this.tx.set(this.endKey(moved[i]!, taskId, start), Buffer.from(end));
    }
    this.tx.set(key, this.codecs.taskTerms.encode(moved.join('\n'), EMPTY));
  }

  /** The runs of `word` (as {@link word} makes it), in task order; undefined when there are more than `limit`. */
  async runs(word: string, limit: number): Promise<TermRun[] | undefined> {
    const { terms } = this.spaces;
    const { begin, end } = terms.range(word);
    let rows = await this.tx.getRange(begin, end, { limit: limit + 1 });
    if (rows.length > limit) return undefined;
    if (this.apart !== undefined) {
      // Read after the transaction's snapshot: whatever left the pending list it read is here.
      rows = unionByKey(rows, await this.apart.getRange(begin, end, limit + 1));
      if (rows.length > limit) return undefined;
    }
    const runs = rows.map((row) => {
      const [, taskId, createdAt, checkpointId] = terms.unpack(row.key) as [string, string, string, string];
      return { taskId, start: { createdAt, checkpointId }, last: isOpen(row.value) ? undefined : lastOf(decodeWith<string[]>(this.codecs.terms, row.value, EMPTY)) };
    });
    // A run whose key says open may have ended under its task (`close`): point reads, side by side.
    const ends = await Promise.all(runs.map((run) => (run.last === undefined ? this.endOf(word, run.taskId, run.start) : undefined)));
    for (const [i, end] of ends.entries()) if (end !== undefined) runs[i]!.last = end;
    return runs;
  }

  /** The stored row of a task's open runs (value undefined: none), as the merge thread reads it. */
  async openRunsRow(taskId: string): Promise<{ key: Buffer; value: Buffer | undefined }> {
    const key = this.spaces.openTerms.pack(taskId);
    return { key, value: await this.tx.get(key) };
  }

  /** The open runs of a task (the words of its newest checkpoint), each with where it starts; shared, never to be changed. */
  async openRuns(taskId: string): Promise<ReadonlyMap<string, IndexPosition>> {
    const key = this.spaces.openTerms.pack(taskId);
    const value = await this.tx.get(key);
    if (value === undefined) return new Map();
    const kept = OPEN_RUNS.get(key, value);
    if (kept !== undefined) return kept;
    const runs = openRunsOf(decodeWith<string>(this.codecs.openTerms, value, EMPTY));
    OPEN_RUNS.set(key, value, runs);
    return runs;
  }

  /**
   * `runs`, the task's open runs as {@link openRuns} answered them, to
   * change: the map itself once taken out of the cache (so no later reader
   * is given it), else a copy. Readers use the map they are given at once,
   * so one given it before holds it no longer.
   */
  private takeOpenRuns(taskId: string, runs: ReadonlyMap<string, IndexPosition>): Map<string, IndexPosition> {
    return OPEN_RUNS.take(this.spaces.openTerms.pack(taskId), runs) ? (runs as Map<string, IndexPosition>) : new Map(runs);
  }

  /**
   * Replaces the task's open runs (`open-runs.ts`: a line per start, its
   * words after it). `runs` is kept as the task's open runs
   * (`OpenRunsCache`): the caller leaves it as it is.
   */
  writeOpenRuns(taskId: string, runs: ReadonlyMap<string, IndexPosition>): void {
    const key = this.spaces.openTerms.pack(taskId);
    const bytes = this.codecs.openTerms.encode(openRunsText(runs), EMPTY);
    this.tx.set(key, bytes);
    OPEN_RUNS.set(key, bytes, runs);
  }

  /** The words whose runs start at `start` in the task, as its `taskTerms` row lists them. */
  private async startsAt(taskId: string, start: IndexPosition): Promise<string[]> {
    const value = await this.tx.get(this.startsKey(taskId, start));
    return value === undefined ? [] : this.startsOf(this.startsKey(taskId, start), value).words;
  }

  /** Lists `words` (beside `listed`, already there) as starting runs at `start`; no word left clears the row. */
  private listStarts(taskId: string, start: IndexPosition, words: readonly string[], listed: readonly string[]): void {
    const key = this.startsKey(taskId, start);
    if (words.length === 0 && listed.length === 0) this.tx.clear(key);
    else this.tx.set(key, this.codecs.taskTerms.encode([...listed, ...words].join('\n'), EMPTY));
  }

  private startsOf(key: Buffer, value: Uint8Array): { taskId: string; start: IndexPosition; words: string[] } {
    const [taskId, createdAt, checkpointId] = this.spaces.taskTerms.unpack(key) as [string, string, string];
    const text = decodeWith<string>(this.codecs.taskTerms, value, EMPTY);
    return { taskId, start: { createdAt, checkpointId }, words: text === '' ? [] : text.split('\n') };
  }

  private startsKey(taskId: string, start: IndexPosition): Buffer {
    return this.spaces.taskTerms.pack(taskId, start.createdAt, start.checkpointId);
  }

  /** A run's row: the transaction's own, else the one kept apart. */
  private async runAt(key: Buffer): Promise<Buffer | undefined> {
    return (await this.tx.get(key)) ?? (await this.apart?.get(key));
  }

  /** Removes a run, here and (once the transaction has committed) apart. */
  private clearRun(key: Buffer): void {
    this.tx.clear(key);
    if (this.apart !== undefined) this.clearedApart.push(key);
  }

  /** Whether a stored word is spelled as the index keys hold it now: no encryption, or blinded already (`~`). */
  private asIndexed(word: string): boolean {
    return this.sealing === undefined || word.startsWith('~');
  }

  /**
   * The spelling an open run's key (and so its end) is stored under. With
   * encryption on, an open word written plain (before encryption was turned
   * on) may have had its run moved to the blind spelling by a re-blinding
   * pass that has not reached the open runs yet.
   */
  private async openWord(word: string, taskId: string, start: IndexPosition): Promise<string> {
    if (this.asIndexed(word)) return word;
    const blind = this.sealing!.blind(word);
    return (await this.tx.get(this.runKey(blind, taskId, start))) !== undefined ? blind : word;
  }

  /** Opens a run: its key under the word, open, and no end under the task (one an earlier run there left is cleared). */
  private open(word: string, taskId: string, start: IndexPosition): void {
    this.tx.set(this.runKey(word, taskId, start), OPEN);
    this.tx.clear(this.endKey(word, taskId, start));
  }

  /** A run written closed at once, its end in its own value (a checkpoint placed or changed behind the newest). */
  private setRun(word: string, taskId: string, start: IndexPosition, last: Buffer): void {
    this.tx.set(this.runKey(word, taskId, start), last);
    this.tx.clear(this.endKey(word, taskId, start));
  }

  /**
   * Ends an open run at `last` (`lastValue` of the run's last position):
   * under the task (`runEnds`), beside the task's other ends, rather than
   * in the run's own key under the word, which a merge would otherwise
   * rewrite on a leaf of its own for every word a checkpoint drops (`runs`
   * reads it back). `head`: `endsHead` of the task and start, when packed
   * already.
   */
  private close(word: string, taskId: string, start: IndexPosition, last: Buffer, head?: Buffer): void {
    this.tx.set(this.endKey(word, taskId, start, head), last);
  }

  /**
   * Where a run whose key says open ended, if it did: in a row a merge wrote
   * for the runs of its start that ended together ({@link endTogether}),
   * else in its own key (a change's, or as releases before format 10 wrote
   * every end). A run has one end: a change that opens it again takes its
   * word out of the rows. A point read finds the first row, which most
   * ended runs are in (a search reads this for each of a word's runs that
   * looks open); a run still open of a start that has one is told by the
   * task's open runs before the later rows' range is read.
   */
  private async endOf(word: string, taskId: string, start: IndexPosition): Promise<IndexPosition | undefined> {
    if (endsGrouped()) {
      const key = this.endsRowKey(taskId, start);
      const value = await this.tx.get(key);
      if (value !== undefined) {
        const first = this.endsRow(key, value, true);
        if (first.words.includes(word)) return first.last;
        // Some runs of its start ended, not this one the first time: if the task's open runs hold it from this start, it is
        // open (read on this snapshot, as the rows are); else it ended later, in a later row (or, a change's, its own key).
        const open = (await this.openRuns(taskId)).get(word);
        if (open !== undefined && open.createdAt === start.createdAt && open.checkpointId === start.checkpointId) return undefined;
        for (const later of await this.laterEnds(taskId, start)) if (later.words.includes(word)) return later.last;
      }
    }
    const value = await this.tx.get(this.endKey(word, taskId, start));
    return value === undefined ? undefined : lastOf(decodeWith<string[]>(this.codecs.terms, value, EMPTY));
  }

  /** `head`: {@link endsHead} of the same task and start, packed once for many words. */
  private endKey(word: string, taskId: string, start: IndexPosition, head?: Buffer): Buffer {
    // By start, then word: the runs a checkpoint's words leave mostly started together (a step's words come and go together), so their ends fall side by side.
    return head === undefined ? this.spaces.runEnds.pack(taskId, start.createdAt, start.checkpointId, word) : packStringBetween(head, word, EMPTY);
  }

  /** What comes before the word in the end keys of a task's runs that start at `start`. */
  private endsHead(taskId: string, start: IndexPosition): Buffer {
    return this.spaces.runEnds.pack(taskId, start.createdAt, start.checkpointId);
  }

  /** `tail`: {@link runTail} of the same task and start, packed once for many words. */
  private runKey(word: string, taskId: string, start: IndexPosition, tail?: Buffer): Buffer {
    return tail === undefined ? this.spaces.terms.pack(word, taskId, start.createdAt, start.checkpointId) : packStringBetween(this.spaces.terms.prefix, word, tail);
  }

  /** What follows the word in the run keys of a task that start at `start`. */
  private runTail(taskId: string, start: IndexPosition): Buffer {
    return PARTS.pack(taskId, start.createdAt, start.checkpointId);
  }

  private lastValue(last: IndexPosition): Buffer {
    return this.codecs.terms.encode([last.createdAt, last.checkpointId], EMPTY);
  }
}

function everyTermAsIs(terms: ReadonlySet<string>): boolean {
  for (const term of terms) if (indexTerm(term) !== term) return false;
  return true;
}

/** Orders positions as the index keys do, older first: createdAt, then id (ASCII both, so string order is byte order). */
export function comparePositions(a: IndexPosition, b: IndexPosition): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.checkpointId < b.checkpointId ? -1 : a.checkpointId > b.checkpointId ? 1 : 0;
}

function isOpen(run: Uint8Array): boolean {
  return run.length === 1 && run[0] === OPEN[0];
}

function lastOf(value: string[]): IndexPosition | undefined {
  return value.length === 2 ? { createdAt: value[0]!, checkpointId: value[1]! } : undefined;
}

/**
 * Whether a merge ends a checkpoint's runs a row for each start
 * ({@link TermRows.endTogether}, store format 10): in the `task` layout.
 * A store kept in the `spaces` layout is written as format 8 wrote it, a
 * key for each ended run, so a release of format 8 still serves it.
 */
function endsGrouped(): boolean {
  return keyLayout() === 'task';
}

/** A row of ends written together ({@link TermRows.endTogether}); `first`: the row of a start's first ends. */
interface EndsRow {
  key: Buffer;
  last: IndexPosition;
  first: boolean;
  words: string[];
}

/** A start as one string: the runs of one start may come from two position objects (`open-runs.ts`). */
function startText(start: IndexPosition): string {
  return `${start.createdAt}\n${start.checkpointId}`;
}

/** Run values hold positions and words hold ids or keyed hashes: nothing to bind. */
const EMPTY = Buffer.alloc(0);

/** Packs key parts with no prefix: the tail of a key made of a prefix, one part and these (`packStringBetween`). */
const PARTS = new Subspace(EMPTY);

/** The value of an open run: an empty MessagePack array. */
const OPEN = Buffer.from([0x90]);

/** Two lists of rows in key order as one, in key order; a key in both is `ours`'s row. */
function unionByKey(ours: KeyValue[], apart: KeyValue[]): KeyValue[] {
  if (apart.length === 0) return ours;
  if (ours.length === 0) return apart;
  const rows: KeyValue[] = [];
  let i = 0;
  let j = 0;
  while (i < ours.length || j < apart.length) {
    const order = i === ours.length ? 1 : j === apart.length ? -1 : Buffer.compare(ours[i]!.key, apart[j]!.key);
    if (order <= 0) rows.push(ours[i++]!);
    else rows.push(apart[j++]!);
    if (order === 0) j++;
  }
  return rows;
}
