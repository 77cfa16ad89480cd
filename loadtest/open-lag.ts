/**
 * What the open loop's tails wait behind: `bench:http`'s open loop (500
 * creates/s and 2,000 reads/s, evenly paced) against Baton alone, with the
 * server's event-loop delay, every GC pause, and how long the event loop's
 * thread waited for a core, over the same window (`lib/lag-probe.mjs`), so
 * that a read p99 can be set beside the pauses that made it. With `BENCH_BASELINE` (another build's `dist/main.js`) the
 * two builds alternate, each on a fresh store.
 *
 *   npx tsx loadtest/open-lag.ts
 *   BENCH_BASELINE=/path/to/other/dist/main.js BENCH_PAIRED_ROUNDS=3 npx tsx loadtest/open-lag.ts
 *   BENCH_LAG_FILL=25000 npx tsx loadtest/open-lag.ts          # a larger store first
 *   BENCH_LAG_PROFILE=1 npx tsx loadtest/open-lag.ts           # and a CPU profile of the window
 *
 * `BENCH_LAG_FILL` checkpoints (default 2,000) are created first at 32
 * connections, then 3 s of rest, then the open loop (`BENCH_SECONDS`, with
 * `bench:http`'s warm-up; `BENCH_OPEN_CREATES`, `BENCH_OPEN_READS` apply).
 * `BENCH_LAG_NODE_FLAGS` and `BENCH_BASELINE_NODE_FLAGS` add node flags to
 * this build's and the baseline's server (after the start script's: V8
 * takes the last of a flag given twice), so one build can be set against
 * itself with other flags (`BENCH_BASELINE=dist/main.js`). Both run at
 * `LOG_LEVEL=warn` unless `BENCH_LOG_LEVEL` says otherwise (`info`: as
 * `npm start` runs by default).
 * `BENCH_LAG_PROFILE=1` runs this build under `--cpu-prof` and prints the
 * window's self time by function and its longest busy stretches (the
 * profiler's own cost makes that run's figures slower).
 *
 * @module
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { onInterrupt, TempDirs } from './lib/cleanup.js';
import { envNumber, nodeFlags } from './lib/env.js';
import { TOKEN } from './lib/http-config.js';
import { concurrently, createCheckpoint } from './lib/http-client.js';
import { taskId, useBodies } from './lib/http-payloads.js';
import { openLoopMeasured } from './lib/open-loop.js';
import { busyStretches, summarize, type Profile } from './lib/profile-summary.js';
import { BATON_MAIN, killServers, startServer, stopServers } from './lib/servers.js';

const FILL = envNumber('BENCH_LAG_FILL', 2_000, false);
const ROUNDS = envNumber('BENCH_PAIRED_ROUNDS', 2, false);
const PROFILE = process.env.BENCH_LAG_PROFILE === '1';
const BASELINE = process.env.BENCH_BASELINE;
const PROBE = resolve('loadtest/lib/lag-probe.mjs');

const tempDirs = new TempDirs('baton-open-lag');
onInterrupt(async () => { await stopServers(); tempDirs.removeAll(); }, () => undefined);
process.on('exit', () => { killServers(); tempDirs.removeAll(); });

interface GcFigures { count: number; totalMs: number; maxMs: number; over5Ms: number }
interface Lag { seconds: number; delay: { p50Ms: number; p99Ms: number; p999Ms: number; maxMs: number }; gc: Record<string, GcFigures>; loopThread: { ranMs: number; waitedForCoreMs: number } }

interface RoundFigures {
  build: string;
  createP99: number;
  readP99: number;
  readMax: number;
  loopUs: number;
  serverUs: number;
  lag: Lag;
}


async function round(build: string, script: string, profileDir?: string): Promise<RoundFigures> {
  const baton = await startServer(build, script, {
    BATON_DATA_DIR: tempDirs.make('data'), BATON_TOKENS: `writer:${TOKEN}`, BATON_RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', PORT: '0', HOST: '127.0.0.1',
  }, '/readyz', [
    ...(profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-interval', '500', '--cpu-prof-dir', profileDir]),
    '--import', PROBE,
    ...nodeFlags(build === 'baseline' ? 'BENCH_BASELINE_NODE_FLAGS' : 'BENCH_LAG_NODE_FLAGS'),
  ]);
  // The probe's lines, from its own stream (stderr): at LOG_LEVEL=info the server's log lines push the window's first out of `output()`.
  const lagLines: string[] = [];
  let partial = '';
  baton.child.stderr!.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop()!;
    for (const line of parts) if (line.startsWith('LAG ')) lagLines.push(line);
  });
  try {
    const ids = (await concurrently(FILL, 32, (i) => createCheckpoint(baton.url, taskId(i)))).map((c) => c.id);
    await new Promise((done) => setTimeout(done, 3_000));
    baton.child.kill('SIGUSR2');
    const open = await openLoopMeasured(baton, ids);
    baton.child.kill('SIGUSR2');
    const deadline = Date.now() + 5_000;
    let lag: Lag | undefined;
    while (lag === undefined && Date.now() < deadline) {
      if (lagLines.length >= 2) lag = JSON.parse(lagLines.at(-1)!.slice(4)) as Lag;
      else await new Promise((done) => setTimeout(done, 100));
    }
    if (lag === undefined) throw new Error(`${build} printed no LAG line:\n${baton.output()}`);
    const figures: RoundFigures = {
      build,
      createP99: open.streams.create?.p99Ms ?? NaN,
      readP99: open.streams.read?.p99Ms ?? NaN,
      readMax: open.streams.read?.maxMs ?? NaN,
      loopUs: open.cpu.eventLoopUsPerReq,
      serverUs: open.cpu.serverUsPerReq,
      lag,
    };
    const scavenge = lag.gc.scavenge;
    const major = lag.gc.markCompact;
    console.log(
      `${build.padEnd(10)} create p50/p99 ${open.streams.create?.p50Ms.toFixed(1)}/${figures.createP99.toFixed(1)} ms, read p50/p99/max ${open.streams.read?.p50Ms.toFixed(2)}/${figures.readP99.toFixed(1)}/${figures.readMax.toFixed(1)} ms, ${open.errors} errors; ` +
        `server ${figures.serverUs.toFixed(0)} us/req (loop ${figures.loopUs.toFixed(0)}); loop delay p99/max ${lag.delay.p99Ms}/${lag.delay.maxMs} ms; ` +
        `scavenges ${scavenge?.count ?? 0}, ${scavenge?.totalMs ?? 0} ms (max ${scavenge?.maxMs ?? 0}, ${scavenge?.over5Ms ?? 0} over 5 ms); mark-compacts ${major?.count ?? 0} (max ${major?.maxMs ?? 0} ms); ` +
        `event loop's thread ran ${lag.loopThread.ranMs} ms, waited for a core ${lag.loopThread.waitedForCoreMs} ms`,
    );
    return figures;
  } finally {
    await stopServers();
  }
}

function profileWindow(dir: string): void {
  const file = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort((a, b) => statSync(join(dir, a)).size - statSync(join(dir, b)).size).pop();
  if (file === undefined) return;
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile & { startTime: number; endTime: number };
  // The window: the open loop's measured seconds and its warm-up, the end of the profile.
  const from = profile.endTime - (envNumber('BENCH_SECONDS', 8, false) + 2) * 1e6;
  let t = profile.startTime;
  const times = profile.timeDeltas.map((delta) => (t += delta));
  const kept = times.flatMap((at, i) => (at >= from ? [i] : []));
  const window = { nodes: profile.nodes, samples: kept.map((i) => profile.samples[i]!), timeDeltas: kept.map((i) => profile.timeDeltas[i]!) };
  console.log(summarize(window, 30));
  console.log(busyStretches(window));
  console.log(`profile: ${join(dir, file)}`);
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

async function main(): Promise<void> {
  useBodies('evolving');
  console.log(`open loop after ${FILL} checkpoints; ${ROUNDS} round(s)${BASELINE === undefined ? '' : `, alternating with ${BASELINE}`}`);
  const rounds: RoundFigures[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const builds: [string, string][] = BASELINE === undefined ? [['this build', BATON_MAIN]] : i % 2 === 0 ? [['baseline', BASELINE], ['this build', BATON_MAIN]] : [['this build', BATON_MAIN], ['baseline', BASELINE]];
    for (const [build, script] of builds) rounds.push(await round(build, script));
  }
  for (const build of ['this build', 'baseline']) {
    const mine = rounds.filter((r) => r.build === build);
    if (mine.length === 0) continue;
    console.log(
      `${build}: medians of ${mine.length}: create p99 ${median(mine.map((r) => r.createP99)).toFixed(1)} ms, read p99 ${median(mine.map((r) => r.readP99)).toFixed(1)} ms, ` +
        `loop ${median(mine.map((r) => r.loopUs)).toFixed(0)} us/req, loop delay p99 ${median(mine.map((r) => r.lag.delay.p99Ms))} ms, scavenge time ${median(mine.map((r) => r.lag.gc.scavenge?.totalMs ?? 0))} ms, ` +
        `event loop waited for a core ${median(mine.map((r) => r.lag.loopThread.waitedForCoreMs))} ms`,
    );
  }
  console.log(`RESULT ${JSON.stringify({ fill: FILL, rounds })}`);
  if (PROFILE) {
    const dir = mkdtempSync(join(tmpdir(), 'baton-open-lag-prof-'));
    await round('profiled', BATON_MAIN, dir);
    profileWindow(dir);
  }
}

main().catch((error) => { console.error(error); process.exitCode = 1; }).finally(() => setTimeout(() => process.exit(), 1000).unref());
