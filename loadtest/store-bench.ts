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
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { encodeValue, setStampedTuple, tenantKeyspace, writeRecord } from '../src/store/keyspace.js';
import { LmdbStore } from '../src/store/lmdb.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';

const RECORD_BYTES = 2048;

function envNumber(name: string, fallback: number, integer: boolean): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, not "${raw}".`);
  }
  return value;
}

const SECONDS = envNumber('BENCH_SECONDS', 5, false);
const CONCURRENCY = envNumber('BENCH_CONCURRENCY', 100, true);
const WARMUP_SECONDS = Math.min(1, SECONDS / 10);

// ---------------------------------------------------------------------------
// Measurement

interface Figures {
  concurrency: number;
  commits: number;
  seconds: number;
  commitsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** One operation; `loop` is the caller's loop number, `n` a number unique within the run. */
type Op = (loop: number, n: number) => Promise<void>;

/** Nearest-rank percentile of ascending `sorted`. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Runs `concurrency` loops of back-to-back `op` for `seconds`; latency per op from hrtime. */
async function runFor(op: Op, concurrency: number, seconds: number, counter: { n: number }): Promise<Figures> {
  const samples: number[] = [];
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  const loop = async (id: number): Promise<void> => {
    for (let t0 = process.hrtime.bigint(); t0 < end; t0 = process.hrtime.bigint()) {
      await op(id, counter.n++);
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, id) => loop(id)));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  const sorted = Float64Array.from(samples).sort();
  return {
    concurrency,
    commits: sorted.length,
    seconds: round(elapsed, 3),
    commitsPerSec: round(sorted.length / elapsed, 1),
    p50Ms: round(percentile(sorted, 0.5), 3),
    p99Ms: round(percentile(sorted, 0.99), 3),
    maxMs: round(sorted.length === 0 ? NaN : sorted[sorted.length - 1]!, 3),
  };
}

/** Warm-up (discarded), then the measured run. */
async function measure(op: Op, concurrency: number): Promise<Figures> {
  const counter = { n: 0 };
  await runFor(op, concurrency, WARMUP_SECONDS, counter);
  return runFor(op, concurrency, SECONDS, counter);
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

// ---------------------------------------------------------------------------
// Workloads

const TENANT = `bench-${process.pid}-${Date.now()}`;
const keyspace = tenantKeyspace(TENANT);

const taskId = (loop: number): string => `task-${String(loop).padStart(6, '0')}`;
const checkpointId = (n: number): string => `cp-${String(n).padStart(12, '0')}`;

/** Filler for the checkpoint's state, sized once so that the encoded record is RECORD_BYTES. */
const STATE = ((): string => {
  const probe = (len: number): number => encodeValue(record('task-000000', 'cp-000000000000', len > 0 ? 'x'.repeat(len) : '')).length;
  let len = RECORD_BYTES - probe(0);
  while (len > 0 && probe(len) > RECORD_BYTES) len--;
  // Printable, not all the same byte (no store here compresses, but stay honest).
  let s = '';
  for (let i = 0; s.length < len; i++) s += ((i * 7919) % 1_000_003).toString(36) + ' ';
  return s.slice(0, len);
})();

function record(task: string, id: string, state: string): Record<string, unknown> {
  return {
    id,
    taskId: task,
    agent: 'bench-agent',
    createdAt: 1_760_000_000_000,
    labels: { env: 'bench' },
    state,
  };
}

const RECORD_SIZE = encodeValue(record(taskId(0), checkpointId(0), STATE)).length;

/** A checkpoint write as the repository does it: the 2 KB record plus a stamped outbox event. */
function checkpointWrite(store: Store): Op {
  return async (loop, n) => {
    const task = taskId(loop);
    const id = checkpointId(n);
    const event = encodeValue({ specversion: '1.0', type: 'baton.checkpoint.created', source: '/bench', id, subject: task });
    await store.transact(async (tx) => {
      await writeRecord(tx, keyspace.checkpoints, [task, id], record(task, id, STATE));
      setStampedTuple(tx, keyspace.events, 0, [], event);
    });
  };
}

interface StoreResult {
  sequential: Figures;
  concurrent: Figures;
}

async function benchStore(store: Store): Promise<StoreResult> {
  const op = checkpointWrite(store);
  const sequential = await measure(op, 1);
  const concurrent = await measure(op, CONCURRENCY);
  return { sequential, concurrent };
}

async function benchRawLmdb(path: string): Promise<StoreResult> {
  // The same environment settings as LmdbStore.open.
  const env: RootDatabase = open({
    path,
    maxDbs: 4,
    mapSize: 64 * 1024 ** 3,
    overlappingSync: false,
    noSync: false,
    compression: false,
  });
  const db: Database<Buffer, Buffer> = env.openDB<Buffer, Buffer>({ name: 'data', keyEncoding: 'binary', encoding: 'binary' });
  const value = Buffer.alloc(RECORD_SIZE);
  value.write(STATE.padEnd(RECORD_SIZE, ' '), 'latin1');
  const op: Op = async (loop, n) => {
    await db.put(keyspace.checkpoints.pack(taskId(loop), checkpointId(n), 0), value);
  };
  try {
    const sequential = await measure(op, 1);
    const concurrent = await measure(op, CONCURRENCY);
    return { sequential, concurrent };
  } finally {
    await env.close();
  }
}

// ---------------------------------------------------------------------------
// Temp directories, removed at the end whatever happens

const tempDirs: string[] = [];

function tempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `baton-bench-${label}-`));
  tempDirs.push(dir);
  return dir;
}

function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    removeTempDirs();
    process.exit(130);
  });
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
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
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
  const storeDir = tempDir('lmdb');
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
  const raw = await benchRawLmdb(tempDir('raw'));
  rows.push({ name: 'lmdb raw put', workload: 'sequential', f: raw.sequential });
  rows.push({ name: 'lmdb raw put', workload: 'concurrent', f: raw.concurrent });
  result.lmdbRaw = raw;

  removeTempDirs();

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

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    removeTempDirs();
    // Stop even if a native client (FoundationDB's network thread) keeps the loop alive.
    setTimeout(() => process.exit(), 2_000).unref();
  });
