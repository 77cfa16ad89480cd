/**
 * What a create costs the disk: the pages LMDB writes (one `pwrite64` a
 * page, counted by `perf stat` on the syscall tracepoints, which slows
 * nothing down), its `fdatasync`s, and the bytes the block device wrote
 * (`/sys/block/<dev>/stat`), per create, for Baton as `npm start` runs it and
 * for the bare server's floor route (one fsynced put of the hashed
 * document) in the same run. On LMDB every commit rewrites each B-tree page
 * it touches and the pages above it, so the pages a create dirties, not its
 * bytes, are what its commit and fsync wait for (`docs/performance.md`,
 * issue 44).
 *
 *   npm run bench:pages
 *
 * Scenarios, each after BENCH_PAGES_FILL (default 20,000) evolving creates
 * over 1,000 tasks and the indexer settled:
 *   one caller    BENCH_PAGES_LONE (default 200) creates one after another
 *   closed loop   BENCH_CONNECTIONS (100) connections for BENCH_SECONDS
 * A merge of the full-text index writes pages too: the one caller's figures
 * count its creates and their merges (the count stops once the indexer's
 * backlog is empty); the closed loop's, every page written in the measured
 * seconds, the merges that ran in them included.
 * Without perf, prints "skipped" and the reason. Nothing asserts on time.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { TempDirs, onInterrupt, runMain } from './lib/cleanup.js';
import { SECONDS, TOKEN } from './lib/http-config.js';
import { concurrently, createCheckpoint, serverMetric } from './lib/http-client.js';
import { taskId, uniqueCheckpointBody, useBodies } from './lib/http-payloads.js';
import { closedLoop, postRequests } from './lib/http-scenarios.js';
import { perfUnavailable } from './lib/perf-budget.js';
import { BATON_MAIN, killServers, startServer, stopServers, type Server } from './lib/servers.js';

const FILL = Number(process.env.BENCH_PAGES_FILL ?? 20_000);
const LONE = Number(process.env.BENCH_PAGES_LONE ?? 200);

const tempDirs = new TempDirs('baton-pages');
onInterrupt(async () => { await stopServers(); tempDirs.removeAll(); });
process.on('exit', () => { killServers(); tempDirs.removeAll(); });

interface Counted {
  creates: number;
  pages: number;
  syncs: number;
  deviceBytes: number;
}

/** The block device under `dir` (sysfs name), for its write counter; undefined when it cannot be told. */
function deviceOf(dir: string): string | undefined {
  const { dev } = statSync(dir);
  const majorMinor = `${Math.floor(dev / 256) & 0xfff}:${(dev & 0xff) | ((dev >> 12) & 0xfff00)}`;
  try {
    const name = readFileSync(`/sys/dev/block/${majorMinor}/uevent`, 'utf8').match(/^DEVNAME=(.+)$/m)?.[1];
    return name?.replace(/^.*\//, '');
  } catch {
    return undefined;
  }
}

function deviceWrittenBytes(device: string | undefined): number {
  if (device === undefined) return NaN;
  // Field 7 of the block device's stat: sectors written, in 512-byte units whatever the device's sector.
  const path = `/sys/class/block/${device}/stat`;
  return Number(readFileSync(path, 'utf8').trim().split(/\s+/)[6]) * 512;
}

/** Counting `pid`'s page writes and fdatasyncs (every thread) from now; the result stops and reads the count. */
async function startCounting(pid: number, device: string | undefined): Promise<(creates: number) => Promise<Counted>> {
  const perf = spawn('perf', ['stat', '-x,', '-e', 'syscalls:sys_enter_pwrite64,syscalls:sys_enter_fdatasync', '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let report = '';
  perf.stderr.on('data', (chunk: Buffer) => (report += chunk.toString()));
  // perf attaches to the threads before the work starts.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = deviceWrittenBytes(device);
  return async (creates) => {
    const deviceBytes = deviceWrittenBytes(device) - before;
    perf.kill('SIGINT');
    await new Promise((resolve) => perf.once('exit', resolve));
    const count = (event: string): number => Number(report.split('\n').find((row) => row.includes(event))?.split(',')[0] ?? NaN);
    return { creates, pages: count('sys_enter_pwrite64'), syncs: count('sys_enter_fdatasync'), deviceBytes };
  };
}

/** Waits until the indexer has merged everything (its backlog 0, twice in a row a second apart): a scenario counts its own merges only. */
async function settled(server: Server): Promise<void> {
  const deadline = Date.now() + 120_000;
  let zeros = 0;
  while (zeros < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    zeros = (await serverMetric(server, 'indexer_backlog')) === 0 ? zeros + 1 : 0;
  }
}

async function lone(server: Server, path: string): Promise<number> {
  for (let i = 0; i < LONE; i++) {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: uniqueCheckpointBody(taskId((i * 37) % 1000)) });
    await res.text();
    if (res.status !== 201) throw new Error(`${server.name} answered ${res.status} to a create`);
  }
  return LONE;
}

function line(name: string, c: Counted): string {
  const per = (n: number): string => (n / c.creates).toFixed(1).padStart(7);
  return `${name.padEnd(24)} ${String(c.creates).padStart(7)} ${per(c.pages)} ${(((c.pages * 4) / c.creates)).toFixed(0).padStart(8)} ${per(c.syncs)} ${(c.creates / Math.max(1, c.syncs)).toFixed(1).padStart(9)} ${Number.isNaN(c.deviceBytes) ? '      n/a' : (c.deviceBytes / 1024 / c.creates).toFixed(0).padStart(9)}`;
}

async function main(): Promise<void> {
  const unavailable = perfUnavailable();
  if (unavailable !== undefined) {
    console.log(`bench:pages skipped: ${unavailable}`);
    return;
  }
  useBodies('evolving');
  const dataDir = tempDirs.make('data');
  const floorDir = tempDirs.make('floor');
  const device = deviceOf(dataDir);
  const baton = await startServer('baton', BATON_MAIN, { BATON_DATA_DIR: dataDir, BATON_TOKENS: `writer:${TOKEN}`, BATON_RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1' }, '/readyz');
  const bare = await startServer('bare', 'loadtest/bare-server.ts', { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', BARE_FLOOR_DIR: floorDir }, '/v1/checkpoints/x');
  console.log(`bench:pages: ${FILL} evolving creates over 1,000 tasks first, then each scenario; data on ${device ?? 'an unknown device'}`);
  await concurrently(FILL, 64, (i) => createCheckpoint(baton.url, taskId(i % 1000)));
  await concurrently(FILL, 64, async (i) => {
    const res = await fetch(`${bare.url}/floor/checkpoints`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: uniqueCheckpointBody(taskId(i % 1000)) });
    await res.text();
  });
  await settled(baton);
  const rows: string[] = [];
  for (const [server, path] of [[baton, '/v1/checkpoints'], [bare, '/floor/checkpoints']] as const) {
    const name = server === bare ? 'floor' : 'baton';
    const stopLone = await startCounting(server.child.pid!, device);
    const created = await lone(server, path);
    // The creates' own merges, counted with them.
    if (server === baton) await settled(baton);
    rows.push(line(`${name}: one caller`, await stopLone(created)));
    // closedLoop calls `before` ahead of its warm-up and again ahead of the measured run: counting starts at the second.
    let stop: ((creates: number) => Promise<Counted>) | undefined;
    let befores = 0;
    const loop = await closedLoop(server, () => postRequests(path), undefined, async () => {
      if (++befores === 2) stop = await startCounting(server.child.pid!, device);
    }, SECONDS);
    rows.push(line(`${name}: closed loop`, await stop!(loop.ok)));
  }
  console.log(`${'scenario'.padEnd(24)} ${'creates'.padStart(7)} ${'pages'.padStart(7)} ${'KB'.padStart(8)} ${'syncs'.padStart(7)} ${'a commit'.padStart(9)} ${'device KB'.padStart(9)}   (per create; "a commit": creates a commit)`);
  for (const row of rows) console.log(row);
  console.log('pages: pwrite64 calls (LMDB writes one a page, 4 KB); device KB: what the block device wrote, every process on it (the warm-up of the closed loop is not counted in creates but its commits may end inside the count)');
  await stopServers();
}

runMain(main, async () => { await stopServers(); tempDirs.removeAll(); });
