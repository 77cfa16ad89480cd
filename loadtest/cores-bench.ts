/**
 * What several processes could give the create on this machine (issue 22,
 * DESIGN §9): the floor route in one process and in BENCH_PROCESSES
 * processes over one LMDB environment (node:cluster, `bare-server.ts`'s
 * BARE_PROCESSES), and Baton's create, each a closed loop of creates at
 * BENCH_CONNECTIONS, alternating for BENCH_ROUNDS rounds. For each it prints
 * the rate, the CPU a create costs the server (every thread of every
 * process), its event loop, and the load generator's CPU a request; then
 * the most creates any number of Baton processes could answer here if they
 * shared nothing and lost nothing: the machine's cores divided by what a
 * create costs the server and the load generator together. Beside it, 60 %
 * of the floor's rate in one process and in several.
 *
 *   npm run bench:cores
 *
 * Then the budget: one more run of Baton's creates with Linux `perf`
 * sampling every thread of the server (`lib/perf-budget.ts`): the CPU a
 * create costs, by thread (event loop, LMDB's writer, V8's helpers, the
 * compression and merge threads) and by part (parse, validation, hash,
 * compression, term index, indexer, audit, hand-offs, LMDB's commit with
 * the kernel's page writes and fsyncs, GC, HTTP), scaled to the CPU /proc
 * counted over the same run. Skipped, with the reason, where perf cannot
 * sample.
 *
 * Environment: BENCH_PROCESSES (default: the number of CPUs), BENCH_ROUNDS
 * (default 2; the figures are the means over the rounds), BENCH_BUDGET_ONLY=1
 * (Baton's budget alone, no floor runs: quick comparisons of a change), and
 * the HTTP benchmark's BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_BODIES.
 * BENCH_BUDGET_LEAVES=N adds each thread's N most sampled innermost frames
 * (symbols, or the library when perf has none) to the budget.
 *
 * @module
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import { TempDirs } from './lib/cleanup.js';
import { CONNECTIONS, SECONDS, TOKEN } from './lib/http-config.js';
import { useBodies } from './lib/http-payloads.js';
import { closedLoop, postRequests, type ClosedFigures } from './lib/http-scenarios.js';
import { envNumber } from './lib/env.js';
import { budgetLines, budgetOf, PERF_NODE_FLAGS, perfUnavailable, startPerf } from './lib/perf-budget.js';
import { BATON_MAIN, runBench, startServer, stopServers, type Server } from './lib/servers.js';
import { alignedTable, fixed } from './lib/tables.js';

const CORES = cpus().length;
const PROCESSES = Math.max(2, Number(process.env.BENCH_PROCESSES ?? CORES));
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const dirs = new TempDirs('baton-cores');

interface Side {
  name: string;
  server: Server;
  path: string;
  runs: ClosedFigures[];
}

/** Means over a side's runs: rate, server CPU and event loop a create (µs), load generator a request (µs). */
function means(runs: ClosedFigures[]) {
  const requests = runs.reduce((sum, r) => sum + r.requests, 0);
  const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
  const weighted = (pick: (r: ClosedFigures) => number) => runs.reduce((sum, r) => sum + pick(r) * r.requests, 0) / requests;
  return {
    rate: runs.reduce((sum, r) => sum + r.ok, 0) / seconds,
    serverUs: weighted((r) => r.cpu.serverUsPerReq),
    loopUs: weighted((r) => r.cpu.eventLoopUsPerReq),
    // generatorPct is % of one core over the run: µs of generator CPU per request.
    generatorUs: runs.reduce((sum, r) => sum + (r.cpu.generatorPct / 100) * r.seconds * 1e6, 0) / requests,
  };
}

const batonEnv = () => ({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', BATON_DATA_DIR: dirs.make('data'), BATON_TOKENS: `writer:${TOKEN}`, BATON_RATE_LIMIT_PER_MINUTE: '1000000000' });

/** Baton's creates once more, with perf sampling every thread of the server over the measured run. */
async function cpuBudget(): Promise<void> {
  const reason = perfUnavailable();
  if (reason !== undefined) {
    console.log(`\nbudget: skipped (${reason})`);
    return;
  }
  const server = await startServer('baton-budget', BATON_MAIN, batonEnv(), '/readyz', PERF_NODE_FLAGS);
  const file = join(dirs.make('perf'), 'perf.data');
  let stop: (() => Promise<void>) | undefined;
  let befores = 0;
  // closedLoop calls `before` ahead of its warm-up and again ahead of the measured run: sampling starts at the second.
  const run = await closedLoop(server, () => postRequests(), CONNECTIONS, async () => {
    if (++befores === 2) stop = startPerf(server.child.pid!, file);
  });
  await stop?.();
  await stopServers();
  const sampled = budgetOf(file, server.child.pid!, run.ok);
  const sampledUs = Object.values(sampled.byThread).reduce((sum, us) => sum + us, 0);
  // perf's own overhead inflates what it samples; the shares are its, the total is /proc's over the same run.
  const scale = run.cpu.serverUsPerReq / sampledUs;
  const scaled = (table: Record<string, number>) => Object.fromEntries(Object.entries(table).map(([key, us]) => [key, us * scale]));
  console.log(`\nbudget: ${fixed(run.okPerSec, 0)} creates/s under perf, ${fixed(run.cpu.serverUsPerReq, 0)} µs of server CPU a create (/proc), event loop ${fixed(run.cpu.eventLoopUsPerReq, 0)} µs; perf's shares scaled to that total`);
  const lines = budgetLines({
    ...sampled,
    byThread: scaled(sampled.byThread),
    byPart: scaled(sampled.byPart),
    byThreadAndPart: Object.fromEntries(Object.entries(sampled.byThreadAndPart).map(([thread, parts]) => [thread, scaled(parts)])),
    byThreadAndLeaf: Object.fromEntries(Object.entries(sampled.byThreadAndLeaf).map(([thread, leaves]) => [thread, scaled(leaves)])),
  }, envNumber('BENCH_BUDGET_LEAVES', 0, true));
  for (const line of lines) console.log(line);
}

async function main(): Promise<void> {
  useBodies(process.env.BENCH_BODIES === 'same' ? 'same' : 'evolving');
  if (process.env.BENCH_BUDGET_ONLY === '1') return cpuBudget();
  const bare = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  console.log(`cores bench: ${CORES} CPUs, ${SECONDS} s per run, ${CONNECTIONS} connections, ${ROUNDS} rounds, floor in 1 and ${PROCESSES} processes`);
  const sides: Side[] = [
    { name: 'floor, 1 process', server: await startServer('floor-1', 'loadtest/bare-server.ts', { ...bare, BARE_FLOOR_DIR: dirs.make('floor-1') }, '/v1/checkpoints/x'), path: '/floor/checkpoints', runs: [] },
    {
      name: `floor, ${PROCESSES} processes`,
      server: await startServer('floor-n', 'loadtest/bare-server.ts', { ...bare, BARE_FLOOR_DIR: dirs.make('floor-n'), BARE_PROCESSES: String(PROCESSES) }, '/v1/checkpoints/x'),
      path: '/floor/checkpoints',
      runs: [],
    },
    {
      name: 'Baton create',
      server: await startServer('baton', BATON_MAIN, batonEnv(), '/readyz'),
      path: '/v1/checkpoints',
      runs: [],
    },
  ];
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of sides) {
      const run = await closedLoop(side.server, () => postRequests(side.path));
      if (run.non2xx > 0 || run.errors > 0) throw new Error(`${side.name}: ${run.non2xx} answers other than 2xx and ${run.errors} errors (${JSON.stringify(run.statusCodes)})`);
      side.runs.push(run);
      console.log(`round ${round} ${side.name.padEnd(22)} ${fixed(run.okPerSec, 0).padStart(6)}/s  server CPU ${fixed(run.cpu.serverUsPerReq, 0)} µs  event loop ${fixed(run.cpu.eventLoopUsPerReq, 0)} µs  generator ${fixed(run.cpu.generatorPct, 0)} % of a core`);
    }
  }
  await stopServers();

  const [one, many, baton] = sides.map((side) => means(side.runs)) as [ReturnType<typeof means>, ReturnType<typeof means>, ReturnType<typeof means>];
  const ceiling = (m: ReturnType<typeof means>) => (CORES * 1e6) / (m.serverUs + m.generatorUs);
  console.log();
  console.log(
    alignedTable(
      ['', 'creates/s', 'server CPU µs/create', 'event loop µs/create', 'generator µs/request', `ceiling on ${CORES} cores/s`],
      sides.map((side, i) => {
        const m = [one, many, baton][i]!;
        return [side.name, fixed(m.rate, 0), fixed(m.serverUs, 0), fixed(m.loopUs, 0), fixed(m.generatorUs, 0), fixed(ceiling(m), 0)];
      }),
      1,
    ),
  );
  const budget = (rate: number) => (CORES * 1e6) / rate - baton.generatorUs;
  const lines: [string, string][] = [
    ["Baton's ceiling with every core", `${fixed(ceiling(baton), 0)}/s`],
    ['60 % of the floor in 1 process', `${fixed(0.6 * one.rate, 0)}/s (for it, server CPU a create at most ${fixed(budget(0.6 * one.rate), 0)} µs; Baton's now ${fixed(baton.serverUs, 0)} µs)`],
    [`60 % of the floor in ${PROCESSES} processes`, `${fixed(0.6 * many.rate, 0)}/s (at most ${fixed(budget(0.6 * many.rate), 0)} µs a create)`],
    ['one Baton process, its event loop full', `${fixed(1e6 / baton.loopUs, 0)}/s (measured ${fixed(baton.rate, 0)}/s)`],
  ];
  const width = Math.max(...lines.map(([label]) => label.length)) + 1;
  console.log(`
The ceiling is ${CORES} cores' CPU over what a create costs the server and the load generator together:
the most creates any number of processes could answer here, if they shared nothing and lost nothing.`);
  for (const [label, value] of lines) console.log(`  ${`${label}:`.padEnd(width)} ${value}`);
  await cpuBudget();
}

runBench(main, dirs);
