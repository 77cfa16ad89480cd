/**
 * Two builds of Baton side by side: this checkout's `dist/main.js` and
 * another's, each on a fresh store, the HTTP benchmark's closed-loop create
 * (POST at BENCH_CONNECTIONS) run against each in turn, alternating for
 * BENCH_PAIRED_ROUNDS rounds. On a VM whose speed drifts by a third between
 * runs a minute apart, only figures taken this way say what a change did.
 * The side that runs first in a round runs slower here (8–13 % in
 * creates, either build, measured by swapping the two), so the order
 * alternates: baseline first in even rounds, this build first in odd ones,
 * and an even number of rounds is counted after the first (BENCH_PAIRED_ROUNDS
 * is raised to the next odd number).
 *
 *   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/
 *   (cd /tmp/before && npm run build)
 *   BENCH_BASELINE=/tmp/before/dist/main.js npm run bench:builds
 *
 * Environment: BENCH_BASELINE (required), BENCH_PAIRED_ROUNDS (default 5),
 * BENCH_BODIES (`evolving`, the default, or `same`: the bodies of
 * `bench:http`, the same on both sides), BENCH_SCENARIO (`create`, the default; `get`: reads of 2,000
 * checkpoints created first on each side; `history`: pages of 100 of the
 * history tasks at one connection, as `bench:http` reads them, or at `BENCH_HISTORY_CONNECTIONS`), and the HTTP benchmark's
 * BENCH_SECONDS, BENCH_CONNECTIONS. `BENCH_NODE_FLAGS` and
 * `BENCH_BASELINE_NODE_FLAGS` add node flags to this build's and the
 * baseline's server after the start script's (V8 takes the last of a flag
 * given twice), so one build can be set against itself with other flags
 * (`BENCH_BASELINE=dist/main.js`). Both run at `LOG_LEVEL=warn` unless
 * `BENCH_LOG_LEVEL` says otherwise (`info`: as `npm start` runs by default). `BENCH_SEALED=1` runs
 * both with encryption at rest (each its own key file, as `bench:http`'s sealed Baton). Prints one line
 * per run (rate, event loop and server CPU per request) and the mean of the
 * rounds after the first, whose creates are most tasks' first.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TempDirs } from './lib/cleanup.js';
import { nodeFlags } from './lib/env.js';
import { TOKEN } from './lib/http-config.js';
import { concurrently, createCheckpoint } from './lib/http-client.js';
import { HISTORY_PER_TASK, HISTORY_TASKS } from './lib/http-config.js';
import { historyTaskId, taskId, useBodies } from './lib/http-payloads.js';
import { closedLoop, getRequests, historyRequests, postRequests } from './lib/http-scenarios.js';
import { BATON_MAIN, runBench, startServer, stopServers } from './lib/servers.js';

const BASELINE = process.env.BENCH_BASELINE ?? '';
// Round 0 is not counted; the rounds after it come in pairs, one of each order.
const ROUNDS = Math.max(3, Number(process.env.BENCH_PAIRED_ROUNDS ?? 5)) | 1;
const SCENARIO = process.env.BENCH_SCENARIO ?? 'create';
const dirs = new TempDirs('baton-builds');
useBodies(process.env.BENCH_BODIES === 'same' ? 'same' : 'evolving');

async function main(): Promise<void> {
  if (!existsSync(BASELINE)) throw new Error('Set BENCH_BASELINE to the dist/main.js of the build to compare with (see the head of this file).');
  const env = { BATON_TOKENS: `writer:${TOKEN}`, BATON_RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', PORT: '0', HOST: '127.0.0.1' };
  const base = dirs.make('stores');
  const sealed = (side: string): Record<string, string> => {
    if (process.env.BENCH_SEALED !== '1') return {};
    const file = join(dirs.make(`keys-${side}`), 'keys');
    writeFileSync(file, `bench:${randomBytes(32).toString('base64')}\n`);
    return { BATON_ENCRYPTION_KEY_FILE: file };
  };
  const sides = [
    { name: 'this build', server: await startServer('this', BATON_MAIN, { ...env, ...sealed('this'), BATON_DATA_DIR: join(base, 'this') }, '/readyz', nodeFlags('BENCH_NODE_FLAGS')) },
    { name: 'baseline', server: await startServer('baseline', BASELINE, { ...env, ...sealed('baseline'), BATON_DATA_DIR: join(base, 'baseline') }, '/readyz', nodeFlags('BENCH_BASELINE_NODE_FLAGS')) },
  ];
  if (SCENARIO !== 'create' && SCENARIO !== 'get' && SCENARIO !== 'history') throw new Error('BENCH_SCENARIO is create, get or history.');
  const requests = await Promise.all(
    sides.map(async ({ server }) => {
      if (SCENARIO === 'get') return getRequests((await concurrently(2000, 32, (i) => createCheckpoint(server.url, taskId(i)))).map((c) => c.id));
      if (SCENARIO === 'history') await concurrently(HISTORY_TASKS * HISTORY_PER_TASK, 32, (i) => createCheckpoint(server.url, historyTaskId(i % HISTORY_TASKS)));
      return SCENARIO === 'history' ? historyRequests : postRequests;
    }),
  );
  // History at one connection, as bench:http's figure against its target; BENCH_HISTORY_CONNECTIONS for its 100-connection row.
  const connections = SCENARIO === 'history' ? Number(process.env.BENCH_HISTORY_CONNECTIONS ?? 1) : undefined;
  const sums = sides.map(() => ({ rate: 0, loop: 0, cpu: 0 }));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 1 ? [0, 1] : [1, 0];
    for (const i of order) {
      const { name, server } = sides[i]!;
      const run = await closedLoop(server, requests[i]!, connections);
      console.log(`round ${round} ${name.padEnd(10)} ${run.okPerSec.toFixed(0).padStart(6)}/s  p50 ${run.p50Ms.toFixed(2)} ms  p99 ${run.p99Ms.toFixed(2)} ms  event loop ${run.cpu.eventLoopUsPerReq.toFixed(0)} µs/req  server CPU ${run.cpu.serverUsPerReq.toFixed(0)} µs/req`);
      if (round === 0) continue;
      sums[i]!.rate += run.okPerSec;
      sums[i]!.loop += run.cpu.eventLoopUsPerReq;
      sums[i]!.cpu += run.cpu.serverUsPerReq;
    }
  }
  const mean = (i: number) => ({ rate: sums[i]!.rate / (ROUNDS - 1), loop: sums[i]!.loop / (ROUNDS - 1), cpu: sums[i]!.cpu / (ROUNDS - 1) });
  const [now, before] = [mean(0), mean(1)];
  console.log(
    `rounds 1-${ROUNDS - 1}: this build ${now.rate.toFixed(0)}/s, baseline ${before.rate.toFixed(0)}/s (${((100 * now.rate) / before.rate).toFixed(1)} %); ` +
      `event loop ${now.loop.toFixed(0)} vs ${before.loop.toFixed(0)} µs/req; server CPU ${now.cpu.toFixed(0)} vs ${before.cpu.toFixed(0)} µs/req`,
  );
  await stopServers();
}

runBench(main, dirs);
