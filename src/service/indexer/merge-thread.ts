/**
 * The indexer's side of its merge thread (`merge-worker.ts`): one thread,
 * started on first use, not keeping the process alive. A batch's pending
 * entries and its tasks' open runs go there as one transferred buffer
 * (`frames.ts`); each task's writes come back. If the thread fails (it
 * cannot start, it exits, it throws), the batch waiting on it and every
 * later one are merged on the event loop instead; a failed thread is not
 * started again.
 *
 * @module
 */
import { Worker } from 'node:worker_threads';
import type { KeyValue } from '../../store/store.js';
import { CLEAR, ENTRY, FrameWriter, OPEN_RUNS, readFrame, SET, TASK } from './frames.js';
import type { MergeReply, MergeRequest } from './merge-worker.js';

/** One write of a merge: a value to set, or null to clear the key. */
export interface MergeWrite {
  key: Buffer;
  value: Buffer | null;
}

/** A task's merge as the thread made it. */
export interface TaskMerge {
  taskId: string;
  writes: MergeWrite[];
}

/**
 * The thread's code: the compiled module in production; under the tests,
 * the TypeScript source through tsx's loader, registered in the thread
 * before the module is imported.
 */
function workerOf(): Worker {
  const typescript = import.meta.url.endsWith('.ts');
  const url = new URL(typescript ? './merge-worker.ts' : './merge-worker.js', import.meta.url);
  // A batch of a few hundred entries at a time: a small heap.
  const resourceLimits = { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 128 };
  if (!typescript) return new Worker(url, { resourceLimits });
  const source = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(source, { eval: true, resourceLimits });
}

export class MergeThread {
  private worker: Worker | undefined;
  private failed = false;
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (writes: ArrayBuffer) => void; reject: (error: Error) => void }>();

  /** Whether batches may go to the thread (false once it failed). */
  get available(): boolean {
    return !this.failed;
  }

  /**
   * Each task's writes for a batch: `entries`, pending entries in key order,
   * and `open`, the open runs of each of their tasks (value undefined: none).
   * Rejects when the thread fails; the caller merges on its own thread.
   */
  async merge(tenant: string, entries: readonly KeyValue[], open: ReadonlyArray<{ key: Buffer; value: Buffer | undefined }>): Promise<TaskMerge[]> {
    const frame = new FrameWriter();
    for (const { key, value } of entries) frame.add(ENTRY, key, value);
    for (const { key, value } of open) frame.add(OPEN_RUNS, key, value);
    const rows = frame.finish();
    const worker = this.start();
    if (worker === undefined) throw new Error('The merge thread is not available.');
    const id = this.next++;
    const writes = await new Promise<ArrayBuffer>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) worker.ref();
      worker.postMessage({ id, tenant, rows } satisfies MergeRequest, [rows]);
    });
    const tasks: TaskMerge[] = [];
    for (const { tag, key, value } of readFrame(writes)) {
      if (tag === TASK) tasks.push({ taskId: key.toString('utf8'), writes: [] });
      else tasks.at(-1)!.writes.push({ key, value: tag === SET ? value! : null });
      if (tag !== TASK && tag !== SET && tag !== CLEAR) throw new Error(`The merge thread answered a row it does not write (tag ${tag}).`);
    }
    return tasks;
  }

  /** Stops the thread; batches waiting are refused. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.fail(new Error('The merge thread was stopped.'));
    this.failed = false;
    await worker?.terminate();
  }

  private start(): Worker | undefined {
    if (this.failed) return undefined;
    if (this.worker !== undefined) return this.worker;
    try {
      const worker = workerOf();
      worker.unref();
      worker.on('message', (reply: MergeReply) => this.answer(reply));
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', () => this.fail(new Error('The merge thread exited.')));
      this.worker = worker;
      return worker;
    } catch (error) {
      this.fail(error instanceof Error ? error : new Error(String(error)));
      return undefined;
    }
  }

  private answer(reply: MergeReply): void {
    const waiting = this.waiting.get(reply.id);
    if (waiting === undefined) return;
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.worker?.unref();
    if ('writes' in reply) waiting.resolve(reply.writes);
    else waiting.reject(new Error(`The merge thread failed: ${reply.error}`));
  }

  private fail(error: Error): void {
    this.failed = true;
    this.worker = undefined;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const { reject } of waiting) reject(error);
  }
}
