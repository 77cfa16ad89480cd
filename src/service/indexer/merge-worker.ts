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
 * Only a tenant without encryption is merged here: a blinded word is made
 * with the tenant's key, which stays on the event loop.
 *
 * @module
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { ThreadAnswer } from '../repository/thread-calls.js';
import { CLEAR, ENTRY, FrameWriter, readFrame, SET, TASK } from './frames.js';
import { KEYLESS, KeyNeeded, mergeGiven } from './merge-rows.js';

export interface MergeRequest {
  id: number;
  tenant: string;
  /** ENTRY rows (in key order) and OPEN_RUNS rows (`frames.ts`). */
  rows: ArrayBuffer;
  /** The tenant has encryption at rest: its words are blind already, or the batch needs the key (`KEYLESS`). */
  sealed?: boolean;
}

/** The writes of each task (`frames.ts`), or `error`. */
export interface MergeReply extends ThreadAnswer {
  writes?: ArrayBuffer;
  /** The batch holds a word or entry only the tenant's key can blind: the event loop merges it. */
  keyNeeded?: boolean;
}

/** The merge of one batch: each task's writes after a TASK row naming it. */
export async function mergeRows(tenant: string, rows: ArrayBuffer, sealed = false): Promise<ArrayBuffer> {
  const given = readFrame(rows).map(({ tag, key, value }) => ({ key, value, entry: tag === ENTRY }));
  const out = new FrameWriter();
  for (const { taskId, writes } of await mergeGiven(tenant, given, sealed ? KEYLESS : undefined)) {
    out.add(TASK, Buffer.from(taskId, 'utf8'), undefined);
    for (const { key, value } of writes) out.add(value === null ? CLEAR : SET, key, value ?? undefined);
  }
  return out.finish();
}

/**
 * The nice value of this thread. The merge is background work: where the
 * event loop (which answers requests) or LMDB's writer wants a core at the
 * same time, it should have it. On two cores a merge thread running at the
 * event loop's priority took the core from it for tens of milliseconds at a
 * time, the tail of every request behind; at 5 it still gets about a third
 * of a contended core's time (CFS weights 335 against 1024), enough for
 * its backlog not to grow (`docs/performance.md`, issue 44).
 */
const MERGE_NICE = 5;

/** Lowers this thread's priority (Linux keeps a nice value per thread, and `/proc/thread-self` names its id). */
function yieldToRequests(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, MERGE_NICE);
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

if (parentPort !== null) yieldToRequests();

parentPort?.on('message', (request: MergeRequest) => {
  mergeRows(request.tenant, request.rows, request.sealed).then(
    (writes) => parentPort!.postMessage({ id: request.id, writes } satisfies MergeReply, [writes]),
    (error: unknown) =>
      parentPort!.postMessage(
        (error instanceof KeyNeeded ? { id: request.id, keyNeeded: true } : { id: request.id, error: error instanceof Error ? error.message : String(error) }) satisfies MergeReply,
      ),
  );
});
