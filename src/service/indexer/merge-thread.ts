/**
 * The indexer's side of its merge thread (`merge-worker.ts`): one thread,
 * started on first use, not keeping the process alive (`thread-calls.ts`). A batch's pending
 * entries and its tasks' open runs go there as one transferred buffer
 * (`frames.ts`); each task's writes come back. If the thread fails (it
 * cannot start, it exits, it throws), the batch waiting on it and every
 * later one are merged on the event loop instead; a failed thread is not
 * started again.
 *
 * @module
 */
import { Worker } from 'node:worker_threads';
import { servedKeyLayout } from '../repository/repository.js';
import { StoreError, type KeyValue, type LentWrite, type StoreLease } from '../../store/store.js';
import { ENTRY, FrameWriter, OPEN_RUNS, readFrame, taskMerges } from './frames.js';
import type { TaskMerge } from './merge-rows.js';
import type { CommitRequest, LentRequest, MergeReply, PrepareRequest, Prepared, ReleaseRequest, RowsRequest } from './merge-worker.js';
import { ThreadCalls } from '../repository/thread-calls.js';
import { helperNice } from '../../threads/priority.js';


/**
 * A thread running `merge-worker.ts` as `role`: the compiled module in
 * production; under the tests, the TypeScript source through tsx's loader,
 * registered in the thread before the module is imported.
 */
function workerOf(role: 'merge' | 'commit'): Worker {
  const typescript = import.meta.url.endsWith('.ts');
  const url = new URL(typescript ? './merge-worker.ts' : './merge-worker.js', import.meta.url);
  // A batch of a few hundred entries at a time: a small heap.
  const options = { resourceLimits: { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 128 }, workerData: { role, nice: helperNice() } };
  if (!typescript) return new Worker(url, options);
  const source = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(source, { eval: true, ...options });
}

export class MergeThread {
  /** Lists and merges batches, and commits their runs apart: background work, at a lower priority (`merge-worker.ts`). */
  private readonly thread = new ThreadCalls<MergeReply>('the merge thread', () => workerOf('merge'));
  /** Commits a batch's merge while the store lends it its writer, at the process's priority: creates wait meanwhile. */
  private readonly committer = new ThreadCalls<MergeReply>('the merge commit thread', () => workerOf('commit'));

  /** Whether batches may go to the threads (false once either failed). */
  get available(): boolean {
    return this.thread.usable && this.committer.usable;
  }

  /**
   * Each task's writes for a batch: `entries`, pending entries in key order,
   * and `open`, the open runs of each of their tasks (value undefined: none).
   * `sealed`: the tenant has encryption at rest; undefined when the batch
   * needs its key (a word or entry written before encryption was on,
   * `KEYLESS` in `merge-rows.ts`). Rejects when the thread fails; the caller
   * merges on its own thread either way.
   */
  async merge(tenant: string, entries: readonly KeyValue[], open: ReadonlyArray<{ key: Buffer; value: Buffer | undefined }>, sealed = false): Promise<TaskMerge[] | undefined> {
    const frame = new FrameWriter();
    for (const { key, value } of entries) frame.add(ENTRY, key, value);
    for (const { key, value } of open) frame.add(OPEN_RUNS, key, value);
    const rows = frame.finish();
    const { writes, keyNeeded } = await this.thread.call({ tenant, rows, sealed, layout: servedKeyLayout() } satisfies Omit<RowsRequest, 'id'>, [rows]);
    if (keyNeeded === true) return undefined;
    if (writes === undefined) throw new Error('The merge thread answered nothing.');
    return taskMerges(readFrame(writes));
  }

  /**
   * Over LMDB: lists a batch in the environment the store lends for reading
   * (`lease`) and makes its merge, kept on the thread for {@link commitRuns}
   * and {@link take} (or {@link drop}). `runsApart`: the runs it opens are
   * committed apart first.
   */
  async prepare(request: Omit<PrepareRequest, 'id' | 'kind' | 'layout'>): Promise<Prepared> {
    const { prepared, storeError } = await this.thread.call({ ...request, kind: 'prepare', layout: servedKeyLayout() });
    if (storeError !== undefined) throw new StoreError(storeError.code, storeError.message);
    if (prepared === undefined) throw new Error('The merge thread answered nothing.');
    return prepared;
  }

  /** Commits a prepared batch's runs apart with the writer `lease` lends (the companion's): the count of runs. */
  commitRuns(batch: number, lease: StoreLease): Promise<LentWrite<number>> {
    return this.lent('runs', batch, lease);
  }

  /**
   * A prepared batch's merge, for {@link commit}: one buffer the event loop
   * passes on without reading. The merge thread forgets the batch.
   */
  async take(batch: number): Promise<ArrayBuffer> {
    const { writes } = await this.thread.call({ kind: 'take', batch } satisfies Omit<LentRequest, 'id'>);
    if (writes === undefined) throw new Error('The merge thread answered nothing.');
    return writes;
  }

  /** Commits a batch's merge ({@link take}) on the commit thread, with the writer `lease` lends: the count of entries merged. */
  async commit(merge: ArrayBuffer, lease: StoreLease): Promise<LentWrite<number>> {
    const { done, committed, storeError } = await this.committer.call({ kind: 'commit', merge, lease } satisfies Omit<CommitRequest, 'id'>, [merge]);
    if (storeError !== undefined) throw new StoreError(storeError.code, storeError.message);
    if (done === undefined) throw new Error('The merge commit thread answered nothing.');
    return { value: done, committed: committed === true };
  }

  /** Forgets a prepared batch that will not be applied. */
  async drop(batch: number): Promise<void> {
    if (this.thread.usable) await this.thread.call({ kind: 'drop', batch } satisfies Omit<LentRequest, 'id'>).catch(() => undefined);
  }

  private async lent(kind: 'runs', batch: number, lease: StoreLease): Promise<LentWrite<number>> {
    const { done, committed, storeError } = await this.thread.call({ kind, batch, lease } satisfies Omit<LentRequest, 'id'>);
    if (storeError !== undefined) throw new StoreError(storeError.code, storeError.message);
    if (done === undefined) throw new Error('The merge thread answered nothing.');
    return { value: done, committed: committed === true };
  }

  /**
   * Closes the environment the thread keeps open at `path` (`Store.keepLent`):
   * a thread not running keeps none, and one that fails meanwhile held
   * nothing once it ended (lmdb-js closes a thread's environments with it).
   */
  readonly release = async (path: string): Promise<void> => {
    for (const thread of [this.thread, this.committer]) {
      if (thread.running) await thread.call({ kind: 'release', path } satisfies Omit<ReleaseRequest, 'id'>).catch(() => undefined);
    }
  };

  /** Stops the threads; batches waiting are refused, and the next batch starts them again. */
  async close(): Promise<void> {
    await Promise.all([this.thread.close(true), this.committer.close(true)]);
  }
}

/**
 * The process's merge thread, shared by its indexers (one in a server; one
 * per app in the tests, which would otherwise each start a thread): a batch
 * carries all the thread needs, and an idle thread does not keep the
 * process alive.
 */
export const MERGE_THREAD = new MergeThread();
