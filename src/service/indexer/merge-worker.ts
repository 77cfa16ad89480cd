/**
 * The indexer's merge, on a thread of its own (`merge-thread.ts` starts it).
 * It is given a batch of the full-text pending list and each of its tasks'
 * open runs, as the indexer read them, and runs the same merge the indexer
 * would run in a transaction (`TermRows.merge`) against a transaction that
 * only answers from those rows and records what is written. The writes go
 * back, task by task, for the indexer to apply in its own transaction once
 * it has checked that the rows are still as they were read. So the words'
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
import { codecsFor } from '../repository/codec.js';
import { keyspaceOf } from '../repository/keyspace.js';
import { TermRows } from '../repository/terms.js';
import type { Bytes, KeyValue, RangeOptions, Transaction, TransactionStats } from '../../store/store.js';
import type { ThreadAnswer } from '../repository/thread-calls.js';
import { CLEAR, ENTRY, FrameWriter, readFrame, SET, TASK } from './frames.js';
import { taskGroups } from './limits.js';

export interface MergeRequest {
  id: number;
  tenant: string;
  /** ENTRY rows (in key order) and OPEN_RUNS rows (`frames.ts`). */
  rows: ArrayBuffer;
}

/** The writes of each task (`frames.ts`), or `error`. */
export interface MergeReply extends ThreadAnswer {
  writes?: ArrayBuffer;
}

/** Answers reads from the rows it was given and records every write, each task's after a TASK row. */
class RecordingTransaction implements Transaction {
  private readonly values = new Map<string, Buffer | undefined>();
  private readonly entries: KeyValue[] = [];
  readonly out = new FrameWriter();

  constructor(rows: ArrayBuffer) {
    for (const { tag, key, value } of readFrame(rows)) {
      this.values.set(key.toString('latin1'), value);
      if (tag === ENTRY && value !== undefined) this.entries.push({ key, value });
    }
  }

  task(taskId: string): void {
    this.out.add(TASK, Buffer.from(taskId, 'utf8'), undefined);
  }

  async get(key: Bytes): Promise<Bytes | undefined> {
    const id = key.toString('latin1');
    if (!this.values.has(id)) throw new Error(`The merge thread was not given the row it reads (${key.toString('hex')}).`);
    return this.values.get(id);
  }

  async getRange(begin: Bytes, end: Bytes, options?: RangeOptions): Promise<KeyValue[]> {
    const rows = this.entries.filter((row) => Buffer.compare(row.key, begin) >= 0 && Buffer.compare(row.key, end) < 0);
    return options?.limit === undefined ? rows : rows.slice(0, options.limit);
  }

  set(key: Bytes, value: Bytes): void {
    this.out.add(SET, key, value);
  }

  clear(key: Bytes): void {
    this.out.add(CLEAR, key, undefined);
  }

  getPrefix(): Promise<KeyValue[]> {
    return unsupported();
  }
  setBlind(): void {
    unsupported();
  }
  clearBlind(): void {
    unsupported();
  }
  clearRange(): void {
    unsupported();
  }
  clearPrefix(): void {
    unsupported();
  }
  add(): void {
    unsupported();
  }
  setStamped(): void {
    unsupported();
  }
  commitStamp(): Promise<Bytes> {
    return unsupported();
  }
  stats(): TransactionStats {
    return unsupported();
  }
}

function unsupported(): never {
  throw new Error('The merge thread reads points and ranges of its rows and writes keys; nothing else.');
}

const CODECS = codecsFor(undefined);

/** The merge of one batch: each task's writes after a TASK row naming it. */
export async function mergeRows(tenant: string, rows: ArrayBuffer): Promise<ArrayBuffer> {
  const tx = new RecordingTransaction(rows);
  const terms = new TermRows(tx, keyspaceOf(tenant), CODECS, undefined, tenant);
  const { entries } = await terms.pending.list(Number.MAX_SAFE_INTEGER);
  for (const group of taskGroups(entries, (entry) => entry.bytes.length)) {
    tx.task(group[0]!.taskId);
    await terms.merge(group[0]!.taskId, group);
  }
  return tx.out.finish();
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
  mergeRows(request.tenant, request.rows).then(
    (writes) => parentPort!.postMessage({ id: request.id, writes } satisfies MergeReply, [writes]),
    (error: unknown) => parentPort!.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies MergeReply),
  );
});
