/**
 * The indexer's merge, on a thread of its own (`merge-thread.ts` starts it).
 * It is given a batch of the full-text pending list and each of its tasks'
 * open runs, as the indexer read them, and makes the merge from those rows
 * alone (`merge-rows.ts`). The writes go back, task by task, for the
 * indexer to apply in its own transaction once it has checked that the
 * rows are still as they were read. So the words'
 * sets, the runs' keys and the open runs' text are made here, beside the
 * event loop, and the event loop only applies bytes.
 *
 * A tenant with encryption is merged here only when its words are blind
 * already: a word still to blind needs the tenant's key, which stays on the
 * event loop (`KeyNeeded`).
 *
 * Over LMDB the threads do the whole batch (`lent` below): the store lends
 * the merge thread the environment to list the batch, then the writer of
 * the runs kept apart to commit them; the batch's merge goes as one buffer
 * to the commit thread (this module again, at the process's priority), to
 * which the store lends its own writer for the merge (`store/lmdb-lent.ts`).
 * The batch's keys and values never reach the event loop's heap.
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { readLent, releaseLent, writeLent } from '../../store/open.js';
import { StoreError, type KeyValue, type StoreErrorCode, type StoreLease, type Transaction } from '../../store/store.js';
import { packInLayout, runKeys, type KeyLayout } from '../repository/repository.js';
import type { ThreadAnswer } from '../repository/thread-calls.js';
import { lowerThisThread } from '../../threads/priority.js';
import { applyMerges, givenRows, listBatch, splitRuns, withinApplyBytes, type OpenRow } from './batch.js';
import { addTaskMerge, ENTRY, FrameWriter, OPEN_RUNS, readFrame, taskMerges } from './frames.js';
import { KEYLESS, KeyNeeded, mergeGiven, type TaskMerge } from './merge-rows.js';

/** A batch's rows to merge, read by the event loop; the writes go back (`merge-thread.ts`, `merge`). */
export interface RowsRequest {
  id: number;
  kind?: 'rows';
  tenant: string;
  /** ENTRY rows (in key order) and OPEN_RUNS rows (`frames.ts`). */
  rows: ArrayBuffer;
  /** The tenant has encryption at rest: its words are blind already, or the batch needs the key (`KEYLESS`). */
  sealed?: boolean;
  /** The key layout of the store the process serves: how the merge ends runs depends on it (`terms.ts`). */
  layout: KeyLayout;
}

/** List a batch in the environment lent for reading, and make its merge, kept here as `batch` (the request's id). */
export interface PrepareRequest {
  id: number;
  kind: 'prepare';
  tenant: string;
  lease: StoreLease;
  sealed: boolean;
  /** False: only a full batch is merged (`indexer.ts`). */
  drain: boolean;
  /** Whether the runs a merge opens are committed apart first (`runs-apart.ts`), by a `runs` request. */
  runsApart: boolean;
  /** As {@link RowsRequest}'s. */
  layout: KeyLayout;
}

/**
 * Commit a prepared batch's runs kept apart with the writer lent (`runs`), hand its merge back as one buffer for the
 * commit thread (`take`, the batch forgotten here), or forget it (`drop`).
 */
export interface LentRequest {
  id: number;
  kind: 'runs' | 'take' | 'drop';
  batch: number;
  lease?: StoreLease;
}

/** On the commit thread: apply a batch's merge (`merge`, as `take` answered it) with the store's writer lent. */
export interface CommitRequest {
  id: number;
  kind: 'commit';
  merge: ArrayBuffer;
  lease: StoreLease;
}

/** Close the environment kept open at `path`: the store that lent it closes or swaps its file (`Store.keepLent`). */
export interface ReleaseRequest {
  id: number;
  kind: 'release';
  path: string;
}

export type MergeRequest = RowsRequest | PrepareRequest | LentRequest | CommitRequest | ReleaseRequest;

/** What a `prepare` found: fewer than a full batch (`left`), nothing (`empty`), a word to blind (`keyNeeded`), or a batch of `count` entries. */
export interface Prepared {
  state: 'left' | 'empty' | 'keyNeeded' | 'ready';
  batch: number;
  count: number;
  full: boolean;
}

/** The writes of each task (`frames.ts`), a batch prepared or applied, or `error`. */
export interface MergeReply extends ThreadAnswer {
  writes?: ArrayBuffer;
  /** The batch holds a word or entry only the tenant's key can blind: the event loop merges it. */
  keyNeeded?: boolean;
  prepared?: Prepared;
  /** `commit`: the entries merged; `runs`: the runs committed. */
  done?: number;
  /** Whether the lent writer committed (the store's commit sequence moves on). */
  committed?: boolean;
  /** A store's failure on the thread (`StoreError`), by its code, for the event loop to raise as it is. */
  storeError?: { code: StoreErrorCode; message: string };
}

/** A batch prepared and not yet applied: what it read and the writes made from it. */
interface PreparedBatch {
  entries: KeyValue[];
  open: Map<string, OpenRow>;
  /** The runs to commit apart (empty when runs are not kept apart). */
  runs: KeyValue[];
  /** The merges the commit thread applies in the lent writer's transaction. */
  merges: readonly TaskMerge[];
}

/** Batches prepared, by the id of their `prepare` request: one at a time in practice (a merge pass runs its batches in turn). */
const prepared = new Map<number, PreparedBatch>();

/** Lists a batch and makes its merge, as `indexer.ts` would on the event loop, and keeps it for `runs` and `take`. */
async function prepare(request: PrepareRequest): Promise<Prepared> {
  const answer = (state: Prepared['state'], count = 0, full = false): Prepared => ({ state, batch: request.id, count, full });
  const listed = await readLent(request.lease, (tx) => listBatch(tx, request.tenant, undefined, request.drain));
  if (listed === undefined) return answer('left');
  if (listed.entries.length === 0) return answer('empty');
  let merges: TaskMerge[];
  try {
    merges = await mergeGiven(request.tenant, givenRows(listed), request.sealed ? KEYLESS : undefined);
  } catch (error) {
    if (error instanceof KeyNeeded) return answer('keyNeeded');
    throw error;
  }
  const batch = withinApplyBytes(merges);
  const split = request.runsApart ? splitRuns(batch, runKeys(request.tenant).has) : { runs: [], rest: batch };
  prepared.set(request.id, { entries: listed.entries, open: listed.open, runs: split.runs, merges: split.rest });
  return answer('ready', listed.entries.length, listed.full);
}

/** Commits a prepared batch's runs apart with the writer the store lent, or hands its merge back (`take`); `drop` forgets it. */
async function lent(request: LentRequest): Promise<{ reply: MergeReply; transfer?: ArrayBuffer[] }> {
  const batch = prepared.get(request.batch);
  if (request.kind === 'take' && batch !== undefined) {
    prepared.delete(request.batch);
    const writes = mergeFrame(batch);
    return { reply: { id: request.id, writes }, transfer: [writes] };
  }
  if (request.kind !== 'runs' || batch === undefined || request.lease === undefined) {
    prepared.delete(request.batch);
    if (request.kind === 'drop') return { reply: { id: request.id } };
    throw new Error('The batch to commit was not prepared on this thread.');
  }
  const runs = batch.runs;
  const { committed } = await writeLent(request.lease, async (tx) => setAllBlind(tx, runs));
  return { reply: { id: request.id, done: batch.runs.length, committed } };
}

/**
 * A batch's merge as the commit thread applies it: the entries listed, then
 * each task (a TASK row), its open runs as listed (OPEN_RUNS; no value:
 * none) and its writes.
 */
function mergeFrame({ entries, open, merges }: PreparedBatch): ArrayBuffer {
  const out = new FrameWriter();
  for (const { key, value } of entries) out.add(ENTRY, key, value);
  for (const merge of merges) {
    addTaskMerge(out, merge);
    const runs = open.get(merge.taskId);
    if (runs !== undefined) out.add(OPEN_RUNS, runs.key, runs.value);
  }
  return out.finish();
}

/** The batch {@link mergeFrame} wrote, as views of its buffer. */
function mergeOf(frame: ArrayBuffer): Pick<PreparedBatch, 'entries' | 'open' | 'merges'> {
  const entries: KeyValue[] = [];
  const open = new Map<string, OpenRow>();
  const merges = taskMerges(readFrame(frame), ({ tag, key, value }, task) => {
    if (tag === ENTRY && value !== undefined && task === undefined) entries.push({ key, value });
    else if (tag === OPEN_RUNS && task !== undefined) open.set(task.taskId, { key, value });
    else throw new Error(`A merge to commit holds a row out of place (tag ${tag}).`);
  });
  return { entries, open, merges };
}

/**
 * On the commit thread: a batch's merge applied with the store's writer
 * lent, each task's only if every row it read is as listed (`applyMerges`).
 */
async function commit(request: CommitRequest): Promise<MergeReply> {
  const { entries, open, merges } = mergeOf(request.merge);
  // Derived work: its meta page is flushed with the next commit, one flush fewer while every create waits (`writeLent`).
  const { value, committed } = await writeLent(request.lease, (tx) => applyMerges(tx, merges, entries, open), true);
  return { id: request.id, done: value, committed };
}

/**
 * Sets each row blind: nothing in the transaction reads them back, so the store keeps no key string and map entry a
 * row for that (~2.7 KB of the merge thread's allocation a create); a key given twice ends as its last row, as before.
 */
function setAllBlind(tx: Transaction, rows: readonly KeyValue[]): void {
  for (const { key, value } of rows) tx.setBlind(key, value);
}

/** The merge of one batch: each task's writes after a TASK row naming it. */
export async function mergeRows(tenant: string, rows: ArrayBuffer, sealed = false): Promise<ArrayBuffer> {
  const given = readFrame(rows).map(({ tag, key, value }) => ({ key, value, entry: tag === ENTRY }));
  const out = new FrameWriter();
  for (const merge of await mergeGiven(tenant, given, sealed ? KEYLESS : undefined)) addTaskMerge(out, merge);
  return out.finish();
}

/**
 * The least nice value of the merge thread; it takes the server's
 * (`BATON_HELPER_NICE`, 10 by default) when that is higher. The merge is
 * background work: where the event loop (which answers requests) or LMDB's
 * writer wants a core at the same time, it should have it. On two cores a
 * merge thread running at the event loop's priority took the core from it
 * for tens of milliseconds at a time, the tail of every request behind; at
 * 5 it still gets about a third of a contended core's time (CFS weights 335
 * against 1024), at 10, level with the other threads, a tenth against the
 * event loop: its backlog kept up either way in the closed loop at 100
 * connections (`docs/performance.md`, issue 44).
 *
 * The commit thread is not lowered below the other threads: while it
 * commits a merge it holds the store's single writer, and every create
 * waits for it. At nice 5 below threads at the process's priority, that
 * hold lasted as long as the thread's third of a contended core took (a
 * priority inversion: creates' p99 in the open loop 232 against 96 ms at
 * the median of five alternated rounds, `docs/performance.md`), and a
 * thread cannot take a lower nice value back without the privilege to.
 * Both threads go to the nice value the server put every thread but the
 * event loop at (`threads/priority.ts`, `BATON_HELPER_NICE`, 10), the
 * merge thread to at least 5: the commit thread is then below the event
 * loop only, level with the threads it shares the cores with.
 */
const MERGE_NICE = 5;

/** What `merge-thread.ts` started this thread with: its role (none for the merge) and the server's nice value for threads other than the event loop. */
const SETUP = workerData as { role?: 'merge' | 'commit'; nice?: number } | null;
/** Which thread this is: the merge or the commit thread. */
const ROLE = SETUP?.role ?? 'merge';

/**
 * Names this thread for `top -H`, `ps -L` and perf (`baton-merge`,
 * `baton-commit`), and lowers its priority: Linux keeps a name and a nice
 * value per thread, and `/proc/thread-self` is this one.
 */
function settle(): void {
  try {
    writeFileSync('/proc/thread-self/comm', `baton-${ROLE}`);
  } catch {
    // Not Linux: the thread keeps the process's name.
  }
  lowerThisThread(Math.max(ROLE === 'merge' ? MERGE_NICE : 0, SETUP?.nice ?? 0));
}

if (parentPort !== null) settle();

/** A store's failure answered with its code (a full disk is not a broken thread); anything else rejects. */
function storeFailure(id: number, error: unknown): { reply: MergeReply } {
  if (error instanceof StoreError) return { reply: { id, storeError: { code: error.code, message: error.message } } };
  throw error;
}

/** The answer to `request`, and the buffers it transfers. */
function answerOf(request: MergeRequest): Promise<{ reply: MergeReply; transfer?: ArrayBuffer[] }> {
  switch (request.kind) {
    case 'prepare':
      packInLayout(request.layout);
      return prepare(request).then((done) => ({ reply: { id: request.id, prepared: done } }), (error: unknown) => storeFailure(request.id, error));
    case 'release':
      return releaseLent(request.path).then(() => ({ reply: { id: request.id } }), (error: unknown) => storeFailure(request.id, error));
    case 'runs':
    case 'take':
    case 'drop':
      return lent(request).catch((error: unknown) => storeFailure(request.id, error));
    case 'commit':
      return commit(request).then((reply) => ({ reply }), (error: unknown) => storeFailure(request.id, error));
    default:
      packInLayout(request.layout);
      return mergeRows(request.tenant, request.rows, request.sealed).then((writes) => ({ reply: { id: request.id, writes }, transfer: [writes] }));
  }
}

parentPort?.on('message', (request: MergeRequest) => {
  answerOf(request).then(
    ({ reply, transfer }) => parentPort!.postMessage(reply, transfer ?? []),
    (error: unknown) =>
      parentPort!.postMessage(
        (error instanceof KeyNeeded ? { id: request.id, keyNeeded: true } : { id: request.id, error: error instanceof Error ? error.message : String(error) }) satisfies MergeReply,
      ),
  );
});
