/**
 * Storage benchmark: commit rate and commit latency of each Baton store for
 * 2 KB checkpoint-like writes, next to a raw `lmdb` put baseline opened with
 * the same durability settings as `LmdbStore`.
 *
 *   npm run bench:store            (= npx tsx loadtest/store-bench.ts)
 *
 * Environment:
 *   BENCH_SECONDS      measured seconds per benchmark (default 5)
 *   BENCH_CONCURRENCY  loops of the concurrent benchmark (default 100)
 *   FDB_CLUSTER_FILE   also benchmark the FoundationDB store
 *   BATON_FDB_PREFIX   key prefix for the FoundationDB store (default '')
 *
 * Prints an aligned table and, last, one line `RESULT {json}` with every figure.
 * Nothing here asserts on time.
 *
 * @module
 */
import { tmpdir } from 'node:os';
import { LmdbStore } from '../src/store/lmdb.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';
import { onInterrupt, runMain, TempDirs } from './lib/cleanup.js';
import { measure, type Figures, type Op, type Timing } from './lib/commit-loop.js';
import { envNumber } from './lib/env.js';
import { round } from './lib/stats.js';
import { checkpointWrite, keyspace, rawLmdbPut, RECORD_SIZE } from './lib/store-workloads.js';
import { alignedTable } from './lib/tables.js';

const SECONDS = envNumber('BENCH_SECONDS', 5, false);
const CONCURRENCY = envNumber('BENCH_CONCURRENCY', 100, true);
const WARMUP_SECONDS = Math.min(1, SECONDS / 10);
const TIMING: Timing = { warmupSeconds: WARMUP_SECONDS, seconds: SECONDS };

// LMDB runs in temp dirs, removed at the end whatever happens.
const tempDirs = new TempDirs('baton-bench');
onInterrupt(() => tempDirs.removeAll());

// ---------------------------------------------------------------------------
// Benchmarks

interface StoreResult {
  sequential: Figures;
  concurrent: Figures;
}

/** One loop, then CONCURRENCY loops, of the same operation. */
async function sequentialAndConcurrent(op: Op): Promise<StoreResult> {
  const sequential = await measure(op, 1, TIMING);
  const concurrent = await measure(op, CONCURRENCY, TIMING);
  return { sequential, concurrent };
}

function benchStore(store: Store): Promise<StoreResult> {
  return sequentialAndConcurrent(checkpointWrite(store));
}

async function benchRawLmdb(path: string): Promise<StoreResult> {
  const raw = rawLmdbPut(path);
  try {
    return await sequentialAndConcurrent(raw.op);
  } finally {
    await raw.close();
  }
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------
// Output

interface Row {
  name: string;
  workload: string;
  f: Figures;
}

function table(rows: Row[]): string {
  const head = ['store', 'workload', 'conc', 'commits', 'secs', 'commits/s', 'p50 ms', 'p99 ms', 'max ms'];
  const body = rows.map(({ name, workload, f }) => [
    name,
    workload,
    String(f.concurrency),
    String(f.commits),
    f.seconds.toFixed(2),
    f.commitsPerSec.toFixed(0),
    f.p50Ms.toFixed(3),
    f.p99Ms.toFixed(3),
    f.maxMs.toFixed(3),
  ]);
  return alignedTable(head, body, 2);
}

// ---------------------------------------------------------------------------

async function main(): Promise<void> {
  console.log(
    `store bench: ${RECORD_SIZE} B records, ${SECONDS} s per run after ${WARMUP_SECONDS} s warm-up, ` +
      `concurrency ${CONCURRENCY}, temp dirs under ${tmpdir()}, node ${process.version}`,
  );
  const rows: Row[] = [];
  const result: Record<string, unknown> = {
    recordBytes: RECORD_SIZE,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    concurrency: CONCURRENCY,
    tmpdir: tmpdir(),
    node: process.version,
  };

  // LmdbStore: one transaction = record + stamped event (+ the store's own sequence key).
  const storeDir = tempDirs.make('lmdb');
  const lmdbStore = LmdbStore.open({ path: storeDir });
  let lmdb: StoreResult;
  try {
    lmdb = await benchStore(lmdbStore);
  } finally {
    await lmdbStore.close();
  }
  rows.push({ name: 'lmdb', workload: 'sequential', f: lmdb.sequential });
  rows.push({ name: 'lmdb', workload: 'concurrent', f: lmdb.concurrent });
  result.lmdb = lmdb;

  // Raw lmdb put of the same bytes, same durability settings, its own fresh env.
  const raw = await benchRawLmdb(tempDirs.make('raw'));
  rows.push({ name: 'lmdb raw put', workload: 'sequential', f: raw.sequential });
  rows.push({ name: 'lmdb raw put', workload: 'concurrent', f: raw.concurrent });
  result.lmdbRaw = raw;

  tempDirs.removeAll();

  // FoundationDB, only when a cluster file is given.
  const notes: string[] = [];
  const clusterFile = process.env.FDB_CLUSTER_FILE;
  if (!clusterFile) {
    notes.push('fdb: skipped: no FoundationDB reachable (set FDB_CLUSTER_FILE)');
    result.fdb = { skipped: 'no FoundationDB reachable (set FDB_CLUSTER_FILE)' };
  } else {
    let fdbStore: Store | undefined;
    try {
      fdbStore = await openStore({
        store: 'fdb',
        dataDir: '',
        fdbClusterFile: clusterFile,
        fdbPrefix: process.env.BATON_FDB_PREFIX ?? '',
      });
      await withTimeout(fdbStore.ping(), 5_000, 'FoundationDB ping');
    } catch (error) {
      if (fdbStore) await fdbStore.close().catch(() => undefined);
      fdbStore = undefined;
      notes.push(`fdb: skipped: ${message(error)}`);
      result.fdb = { skipped: message(error) };
    }
    if (fdbStore) {
      const store = fdbStore;
      try {
        const fdb = await benchStore(store);
        rows.push({ name: 'fdb', workload: 'sequential', f: fdb.sequential });
        rows.push({ name: 'fdb', workload: 'concurrent', f: fdb.concurrent });
        result.fdb = fdb;
      } catch (error) {
        notes.push(`fdb: failed: ${message(error)}`);
        result.fdb = { failed: message(error) };
      } finally {
        // Remove what the run wrote: everything is under this run's tenant.
        await withTimeout(store.transact(async (tx) => tx.clearPrefix(keyspace.root.prefix)), 10_000, 'FoundationDB cleanup').catch(
          (error: unknown) => notes.push(`fdb: cleanup failed: ${message(error)}`),
        );
        await store.close().catch(() => undefined);
      }
    }
  }

  const rssMB = round(process.memoryUsage.rss() / 1024 ** 2, 1);
  const maxRssMB = round(process.resourceUsage().maxRSS / 1024, 1);
  const heapUsedMB = round(process.memoryUsage().heapUsed / 1024 ** 2, 1);
  result.memory = { rssMB, maxRssMB, heapUsedMB };

  console.log('');
  console.log(table(rows));
  for (const note of notes) console.log(note);
  // The peak counts LMDB's memory-mapped file pages, released when its env closes.
  console.log(`memory: rss at end ${rssMB} MB, heap used ${heapUsedMB} MB (peak rss ${maxRssMB} MB, LMDB map pages included)`);
  console.log(`RESULT ${JSON.stringify(result)}`);
}

// Stops even if a native client (FoundationDB's network thread) keeps the loop alive.
runMain(main, () => tempDirs.removeAll());
