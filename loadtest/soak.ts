/**
 * The soak (issue 46, `docs/reliability.md`): mixed work at about half of
 * the measured capacity for `SOAK_MINUTES` (default 10), to show whether
 * memory, file handles, latency and the disk stay flat over time.
 *
 *   npm run soak                          10 minutes
 *   SOAK_MINUTES=60 npm run soak          the hour the issue asks for
 *
 * Baton runs as `npm start` runs it (`dist/main.js`, built first) on a
 * fresh data directory. The work (`lib/soak-work.ts`): creates with
 * evolving text, patches, finalizations, handoffs with acknowledgments,
 * leases, reads, latest, history and full-text search; beside it
 * `SOAK_SUBSCRIBERS` (default 200) live event streams that drop and
 * reconnect (`lib/soak-sse.ts`). Capacity is measured first, with the
 * streams connected: the mix closed-loop with 32 workers for 10 s; the soak
 * then offers `SOAK_LOAD` (default 0.5) of it, open-loop.
 *
 * Every minute one row: operations, failures, the server's RSS (and its
 * anonymous part: LMDB's mapped file pages count in RSS too), V8 heap
 * used, event-loop delay p99 (prom-client's, over the minute), open file
 * handles, bytes on disk, create and read p99 (as the client saw them), and
 * the event streams' figures. At the end, the drift between the second and
 * the last minute, against the issue's bounds (RSS and handles within
 * 10 %, p99 within 1.25 ×, disk growth proportional to the writes), and a
 * `RESULT {json}` line.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TempDirs } from './lib/cleanup.js';
import { ADMIN_TOKEN, RATE_LIMIT, TOKEN } from './lib/http-config.js';
import { memoryOf } from './lib/proc.js';
import { assertAlive, BATON_MAIN, runBench, startServer, type Server } from './lib/servers.js';
import { Subscribers, type SseFigures } from './lib/soak-sse.js';
import { REQUESTS, SoakWork, type Kind, type Outcome } from './lib/soak-work.js';
import { latencyOf, round } from './lib/stats.js';

const MINUTES = Math.max(1, Number(process.env.SOAK_MINUTES ?? 10));
const SUBSCRIBERS = Number(process.env.SOAK_SUBSCRIBERS ?? 200);
const LOAD = Number(process.env.SOAK_LOAD ?? 0.5);
const CAPACITY_SECONDS = 10;
const CAPACITY_WORKERS = 32;
/** Operations in flight at most; past it the open loop counts the operation as skipped (the server fell behind). */
const MAX_IN_FLIGHT = 512;

interface Row {
  minute: number;
  ops: number;
  opsPerSecond: number;
  failed: number;
  skipped: number;
  rssMB: number;
  anonMB: number;
  heapMB: number;
  eventLoopP99Ms: number;
  openFiles: number;
  diskMB: number;
  createP99Ms: number;
  readP99Ms: number;
  writtenKB: number;
  sse: SseFigures;
}

/** Bytes the files under `dir` take on disk (allocated blocks, not apparent sizes). */
function diskBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += diskBytes(path);
    else if (entry.isFile()) total += statSync(path).blocks * 512;
  }
  return total;
}

function openFiles(pid: number | undefined): number {
  try {
    return pid === undefined ? NaN : readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** The server's V8 heap used and its event-loop delay p99, from its own /metrics (prom-client's default metrics). */
async function serverMetrics(server: Server): Promise<{ heapMB: number; eventLoopP99Ms: number }> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const value = (name: string): number => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { heapMB: round(value('nodejs_heap_size_used_bytes') / 1024 ** 2, 1), eventLoopP99Ms: round(value('nodejs_eventloop_lag_p99_seconds') * 1000, 2) };
}

/** The mix closed-loop: operations a second the server sustains. */
async function capacity(work: SoakWork): Promise<number> {
  const until = performance.now() + CAPACITY_SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CAPACITY_WORKERS }, async () => {
      while (performance.now() < until) {
        await work.next();
        done++;
      }
    }),
  );
  return done / CAPACITY_SECONDS;
}

function printRow(row: Row): void {
  const cells = [
    String(row.minute).padStart(3),
    String(row.ops).padStart(7),
    row.opsPerSecond.toFixed(0).padStart(6),
    String(row.failed).padStart(6),
    String(row.skipped).padStart(7),
    row.rssMB.toFixed(1).padStart(7),
    row.anonMB.toFixed(1).padStart(7),
    row.heapMB.toFixed(1).padStart(7),
    row.eventLoopP99Ms.toFixed(1).padStart(7),
    String(row.openFiles).padStart(5),
    row.diskMB.toFixed(1).padStart(8),
    row.createP99Ms.toFixed(1).padStart(9),
    row.readP99Ms.toFixed(1).padStart(8),
    `${row.sse.open}/${row.sse.events}/${row.sse.reconnects}/${row.sse.failures}`.padStart(20),
  ];
  console.log(cells.join(' '));
}

const pct = (to: number, from: number): string => `${(((to - from) / from) * 100).toFixed(1)} %`;

async function main(dirs: TempDirs): Promise<void> {
  const dataDir = dirs.make('data');
  const server = await startServer(
    'baton',
    BATON_MAIN,
    { BATON_DATA_DIR: dataDir, BATON_TOKENS: `writer:${TOKEN},admin:${ADMIN_TOKEN}`, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: '0', BATON_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) },
    '/healthz',
  );
  const work = new SoakWork(server.url);
  await work.seed();
  const subscribers = new Subscribers(server.url, SUBSCRIBERS);
  subscribers.start();
  const measured = await capacity(work);
  subscribers.take();
  const rate = measured * LOAD;
  const requestsPerOp = Object.values(REQUESTS).reduce((a, b) => a + b, 0) / Object.keys(REQUESTS).length;
  console.log(`soak: ${MINUTES} min at ${(LOAD * 100).toFixed(0)} % of the measured capacity (${measured.toFixed(0)} operations/s closed-loop with ${CAPACITY_WORKERS} workers): ${rate.toFixed(0)} operations/s, ${SUBSCRIBERS} event streams`);
  console.log(`(an operation is 1 to 4 requests, about ${requestsPerOp.toFixed(1)} on average over the kinds; data in ${dataDir})`);
  console.log('min     ops  ops/s failed skipped  rss MB anon MB heap MB eld p99 files  disk MB create p99 read p99 sse open/events/reconn/fail');

  const rows: Row[] = [];
  let minute: Outcome[] = [];
  const failures = new Map<string, number>();
  let skipped = 0;
  let inFlight = 0;
  const started = performance.now();
  let issued = 0;
  let nextRow = started + 60_000;

  const finishMinute = async (): Promise<void> => {
    assertAlive(server);
    const done = minute;
    minute = [];
    const latencies = (kinds: Kind[]): number[] => done.filter((o) => kinds.includes(o.kind) && !o.failed).map((o) => o.ms);
    const memory = memoryOf(server.child.pid);
    const row: Row = {
      minute: rows.length + 1,
      ops: done.length,
      opsPerSecond: done.length / 60,
      failed: done.filter((o) => o.failed).length,
      skipped,
      rssMB: memory?.rssMB ?? NaN,
      anonMB: memory?.anonMB ?? NaN,
      ...(await serverMetrics(server)),
      openFiles: openFiles(server.child.pid),
      diskMB: round(diskBytes(dataDir) / 1024 ** 2, 1),
      createP99Ms: latencyOf(latencies(['create'])).p99Ms,
      readP99Ms: latencyOf(latencies(['read'])).p99Ms,
      writtenKB: round(done.reduce((sum, o) => sum + o.bytes, 0) / 1024, 0),
      sse: subscribers.take(),
    };
    skipped = 0;
    for (const outcome of done) if (outcome.failure !== undefined) failures.set(outcome.failure, (failures.get(outcome.failure) ?? 0) + 1);
    rows.push(row);
    printRow(row);
  };

  // Open loop: operations are started on a schedule whatever the answers do, up to MAX_IN_FLIGHT at once.
  const deadline = started + MINUTES * 60_000;
  while (performance.now() < deadline) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    for (; issued < due; issued++) {
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped++;
        continue;
      }
      inFlight++;
      void work.next().then((outcome) => {
        inFlight--;
        minute.push(outcome);
      });
    }
    if (performance.now() >= nextRow) {
      nextRow += 60_000;
      await finishMinute();
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  if (rows.length < MINUTES) await finishMinute();
  subscribers.stop();

  // The second minute is the baseline (the first warms up); a run of two minutes can only compare the first with the last.
  const second = rows[rows.length >= 3 ? 1 : 0]!;
  const last = rows[rows.length - 1]!;
  const written = rows.slice(rows.indexOf(second) + 1).reduce((sum, row) => sum + row.writtenKB, 0);
  const diskGrowthMB = last.diskMB - second.diskMB;
  console.log(`drift, minute ${second.minute} to minute ${last.minute}:`);
  console.log(`  RSS ${second.rssMB} → ${last.rssMB} MB (${pct(last.rssMB, second.rssMB)}; bound +10 %), of it anonymous ${second.anonMB} → ${last.anonMB} MB (${pct(last.anonMB, second.anonMB)})`);
  console.log(`  open files ${second.openFiles} → ${last.openFiles} (${pct(last.openFiles, second.openFiles)}; bound +10 %)`);
  console.log(`  heap ${second.heapMB} → ${last.heapMB} MB (${pct(last.heapMB, second.heapMB)}); event-loop p99 ${second.eventLoopP99Ms} → ${last.eventLoopP99Ms} ms`);
  console.log(`  create p99 ${second.createP99Ms} → ${last.createP99Ms} ms (× ${(last.createP99Ms / second.createP99Ms).toFixed(2)}; bound × 1.25)`);
  console.log(`  read p99 ${second.readP99Ms} → ${last.readP99Ms} ms (× ${(last.readP99Ms / second.readP99Ms).toFixed(2)}; bound × 1.25)`);
  console.log(`  disk ${second.diskMB} → ${last.diskMB} MB: +${diskGrowthMB.toFixed(1)} MB for ${(written / 1024).toFixed(1)} MB of checkpoint text written (${written > 0 ? ((diskGrowthMB * 1024) / written).toFixed(2) : '-'} bytes on disk per byte written)`);
  const failed = rows.reduce((sum, row) => sum + row.failed, 0);
  const total = rows.reduce((sum, row) => sum + row.ops, 0);
  console.log(`  operations ${total}, failed ${failed}, skipped ${rows.reduce((sum, row) => sum + row.skipped, 0)}`);
  for (const [failure, count] of [...failures].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`    ${count} × ${failure}`);
  console.log(`RESULT ${JSON.stringify({ minutes: MINUTES, capacity: round(measured, 1), rate: round(rate, 1), subscribers: SUBSCRIBERS, rows })}`);
}

const dirs = new TempDirs('baton-soak');
runBench(() => main(dirs), dirs);
