/**
 * The event loop first. Every request is parsed, validated and answered on
 * the main thread; V8's platform workers (garbage collection, compilation),
 * libuv's pool (where lmdb-js commits) and Baton's merge, commit and
 * compression threads run beside it, and a request waits for them only
 * through its commit, if at all. On a machine with fewer cores than busy threads Linux shares a core
 * between threads of equal priority in turn, so a request that arrives
 * while the other threads hold the cores waits its turn: in `bench:http`'s
 * open loop on two cores the main thread spent as long waiting for a core
 * as running in its longer stalls (`docs/performance.md`). Below it, those
 * threads run on what the event loop leaves.
 *
 * The server lowers the threads the process has when it starts (V8's and
 * libuv's, started before any of its code) and records the nice value;
 * Baton's own threads lower themselves to it when they start. A thread
 * inherits its creator's nice value, so any other thread started later
 * (FoundationDB's network thread, through which every read and commit of
 * a request goes) keeps the event loop's. Lowering a priority needs no
 * privilege; raising it back does, so a thread already lower (the
 * compression thread, at 19) keeps its own. Elsewhere than Linux nothing
 * happens.
 *
 * @module
 */
import { readdirSync, readlinkSync, stat } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import process from 'node:process';

/** Where a process lists its threads, one directory per thread id. */
const TASKS = '/proc/self/task';

let recorded = 0;

/** The nice value the server lowered the other threads to (`BATON_HELPER_NICE`); 0 until it did, or when it was told not to. */
export function helperNice(): number {
  return recorded;
}

/** Lowers thread `id` to `nice` unless it is there or lower already; answers whether it did. */
function lower(id: number, nice: number): boolean {
  try {
    if (getPriority(id) >= nice) return false;
    setPriority(id, nice);
    return true;
  } catch {
    // Gone since it was listed, or not this user's to change.
    return false;
  }
}

/**
 * Lowers every thread of this process except the main one to at least
 * `nice` (0–19); answers how many it lowered. Elsewhere than Linux, none.
 */
export function lowerOtherThreads(nice: number): number {
  let ids: number[];
  try {
    ids = readdirSync(TASKS).map(Number);
  } catch {
    return 0;
  }
  let lowered = 0;
  for (const id of ids) {
    // The main thread's id is the process id.
    if (Number.isInteger(id) && id > 0 && id !== process.pid && lower(id, nice)) lowered += 1;
  }
  return lowered;
}

/**
 * Puts the event loop first: makes sure libuv's pool has started (it starts
 * on its first work), lowers every other thread to `nice`, and records it
 * for the threads Baton starts later ({@link helperNice}). `nice` 0 leaves
 * every thread at the process's priority. Answers how many it lowered.
 */
export async function putEventLoopFirst(nice: number): Promise<number> {
  recorded = nice;
  if (nice <= 0) return 0;
  await new Promise<void>((started) => stat('.', () => started()));
  return lowerOtherThreads(nice);
}

/** Lowers the calling thread (a worker thread, at its start) to at least `nice`; on Linux only. */
export function lowerThisThread(nice: number): void {
  if (nice <= 0) return;
  try {
    lower(Number(readlinkSync('/proc/thread-self').split('/').pop()), nice);
  } catch {
    // Not Linux: the thread keeps the process's priority.
  }
}
