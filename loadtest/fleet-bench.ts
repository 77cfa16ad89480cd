/**
 * Fleet benchmark (DESIGN §9, §10): Baton over FoundationDB with one
 * instance and with two over the same cluster, beside a floor route on
 * FoundationDB in the same run, the load generator playing the balancer in
 * front of them in two ways:
 *   round-robin  every instance gets every task's writes (each of the two
 *                instances' connections sends creates of any task)
 *   affinity     each task's writes go to one instance (what consistent
 *                hashing on the task id at the balancer gives;
 *                `docs/fleet.md`): tasks split between the instances
 *
 *   FDB_CLUSTER_FILE=/path/fdb.cluster npm run bench:fleet
 *
 * Scenarios, each BENCH_SECONDS after a discarded warm-up:
 *   floor create      the bare server's /floor-fdb/checkpoints: the same parse,
 *                     validation, canonical JSON and SHA-256, then one
 *                     FoundationDB transaction setting the hashed document
 *   create            BENCH_CONNECTIONS connections of creates over 1,000 tasks:
 *                     one instance (the one holding the indexer duty, which
 *                     merges its own creates); two round-robin; two with
 *                     affinity
 *   one caller        one connection, one create at a time: one instance,
 *                     and the floor (DESIGN §9: p50 within 2 x the floor's)
 *   paced create      BENCH_FLEET_RATE creates/s (default 200), evenly paced,
 *                     each timed from its intended send time: one instance,
 *                     two round-robin, two with affinity, the floor
 *   contention        BENCH_CONTENTION_WRITERS writers (default 32) creating
 *                     checkpoints of ONE task beside as many writers of other
 *                     tasks: one instance; two round-robin (each instance gets
 *                     half of both); two with affinity (the hot task's
 *                     writers all on one instance, the others on the other);
 *                     503 task_contended counted
 * Both instances are warmed up first (discarded), and each scenario is
 * followed by a pause of BENCH_FLEET_SETTLE_SECONDS (default 10) and a wait
 * for the cluster's queues (`lib/fdb-quiet.ts`): the cluster, a process on
 * the same cores, is still writing the last one's data out. The floor's
 * scenarios run last, after Baton's, for the same reason. Bodies are the evolving ones (`BENCH_BODIES=same` for the same
 * text).
 * Each closed loop also says what the instances created and what their
 * indexer merged over it (warm-up included; `lib/merge-share.ts`): a run
 * that merged fewer than it created left its merges to what runs next.
 * Each create's transaction size on FoundationDB is `npm run bench:txsize`
 * with BATON_STORE=fdb. When the cluster's `fdbserver` processes run on this
 * machine, their CPU a request over each closed loop is printed beside
 * Baton's ("cluster CPU"): they share the cores, and what a create costs the
 * cluster bounds the creates as much as what it costs Baton.
 *
 * Without FDB_CLUSTER_FILE it prints "skipped" and why. Everything runs
 * under fresh BATON_FDB_PREFIX keys; children are stopped and temp dirs
 * removed at the end, on error and on SIGINT/SIGTERM. Prints tables and,
 * last, `RESULT {json}`. Nothing here asserts on time.
 *
 * @module
 */
import { cpus } from 'node:os';
import { onInterrupt, runMain, TempDirs } from './lib/cleanup.js';
import { ADMIN_TOKEN, CONNECTIONS, CONTENTION_WRITERS, OPEN_TASKS, QUEUE_MAX_BYTES, RATE_LIMIT, SECONDS, TOKEN, WARMUP_SECONDS } from './lib/http-config.js';
import { taskId, uniqueCheckpointBody, useBodies, type BodyKind } from './lib/http-payloads.js';
import { watchCluster } from './lib/proc.js';
import { closedLoop, closedLoopAcross, postRequests, type ClosedFigures, type Requests } from './lib/http-scenarios.js';
import http from 'node:http';
import { openLoop, type OpenRun } from './lib/open-loop.js';
import { clusterQuiet } from './lib/fdb-quiet.js';
import { indexerHolder, withMergeShare, type MergeCounts } from './lib/merge-share.js';
import { BATON_MAIN, killServers, startServer, stopServers, type Server } from './lib/servers.js';
import { fixed } from './lib/tables.js';

const tempDirs = new TempDirs('baton-fleet-bench');
async function cleanup(): Promise<void> {
  await stopServers();
  tempDirs.removeAll();
}
onInterrupt(cleanup, (signal) => console.error(`\n${signal}: stopping the servers and removing temp dirs`));
process.on('exit', () => {
  killServers();
  tempDirs.removeAll();
});

const RATE = Number(process.env.BENCH_FLEET_RATE ?? 200);
/**
 * A pause after each scenario: the cluster (one process on this machine's
 * cores) still writes the last one's data out. Then a wait until its storage
 * and log queues are short (`lib/fdb-quiet.ts`): the ratekeeper holds
 * transactions back while they are long, and the next scenario would measure
 * that; the waits are printed with the figures.
 */
const SETTLE_SECONDS = Number(process.env.BENCH_FLEET_SETTLE_SECONDS ?? 10);
const quietWaits: number[] = [];
const settle = async (): Promise<void> => {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
  const quiet = await clusterQuiet(process.env.FDB_CLUSTER_FILE!);
  quietWaits.push(quiet.waitedMs);
};
const BODIES: BodyKind = process.env.BENCH_BODIES === 'same' ? 'same' : 'evolving';

/** Task `i` of the instance `side` (0 or 1) of two: the open tasks split by parity, as a hash would split them. */
const affineTask = (i: number, side: number): string => taskId(2 * (i % (OPEN_TASKS / 2)) + side);

/** Creates of the one hot task `hot`. */
const hotRequests = (hot: string): (() => Requests) => () => postRequests('/v1/checkpoints', () => hot);

async function paced(servers: Server[], pick: (k: number) => { target: Server; task: string }, path = '/v1/checkpoints'): Promise<OpenRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const streams = [{ name: 'create', rate: RATE, request: (k: number) => ({ method: 'POST', path, body: uniqueCheckpointBody(pick(k).task), target: pick(k).target }) }];
  try {
    await openLoop(servers[0]!, agent, streams, WARMUP_SECONDS);
    return await openLoop(servers[0]!, agent, streams, SECONDS);
  } finally {
    agent.destroy();
  }
}

interface Row {
  scenario: string;
  setup: string;
  figures: ClosedFigures;
  /** What the instances created and merged over the run, its warm-up included (`lib/merge-share.ts`). */
  merge?: MergeCounts;
}

async function main(): Promise<void> {
  const clusterFile = process.env.FDB_CLUSTER_FILE;
  if (!clusterFile) {
    console.log('bench:fleet skipped: it runs Baton instances over one FoundationDB cluster; set FDB_CLUSTER_FILE to a reachable cluster to run it');
    return;
  }
  const prefix = `fleet-bench-${Date.now()}-${process.pid}`;
  const env = (name: string): Record<string, string> => ({
    BATON_STORE: 'fdb',
    BATON_FDB_PREFIX: prefix,
    BATON_DATA_DIR: tempDirs.make(name),
    BATON_TOKENS: `writer:${TOKEN},admin:${ADMIN_TOKEN}`,
    BATON_QUEUE_MAX_BYTES: String(QUEUE_MAX_BYTES),
    BATON_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    LOG_LEVEL: 'warn',
    PORT: '0',
    HOST: '127.0.0.1',
  });
  useBodies(BODIES);
  // A cluster on this machine shares its cores: its CPU a request is read beside Baton's.
  const servers = watchCluster();
  console.log(
    `fleet bench: ${SECONDS} s per scenario after ${WARMUP_SECONDS} s warm-up, ${CONNECTIONS} connections, ${OPEN_TASKS} tasks, ${BODIES} bodies, ` +
      `paced ${RATE} creates/s, contention ${CONTENTION_WRITERS} writers, FoundationDB at ${clusterFile} (${servers === 0 ? 'no fdbserver on this machine: its CPU not read' : `${servers} fdbserver process(es) on this machine`}), node ${process.version}, ${cpus().length} CPUs`,
  );
  const [a, b, bare] = await Promise.all([
    startServer('baton-a', BATON_MAIN, env('a'), '/readyz'),
    startServer('baton-b', BATON_MAIN, env('b'), '/readyz'),
    startServer('bare', 'loadtest/bare-server.ts', { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', BARE_FDB_PREFIX: `${prefix}-floor` }, '/v1/checkpoints/x'),
  ]);
  const half = Math.max(1, Math.floor(CONNECTIONS / 2));
  const rows: Row[] = [];
  const step = (name: string): void => void process.stderr.write(`  running ${name}…\n`);

  // Both instances' code warmed up first (discarded): the first scenario would otherwise run on a cold JIT.
  step('warm-up of both instances (discarded)');
  await closedLoopAcross([a, b].map((server) => ({ server, requests: () => postRequests('/v1/checkpoints', (i) => `fleet-warm-${i % 100}`), connections: half })));
  await settle();
  // The floor runs last, after Baton's scenarios: its ~4,500 creates a second leave this cluster's storage
  // queue at ~200 MB and the ratekeeper holding transactions back, which the next scenario would measure.
  // One instance's closed loop moved for another reason too: holding the indexer duty, its creates wait for its
  // merges past 1,000 unmerged (`Indexer.admit`), 127-229/s here; 566-980/s through the other instance, whose
  // merges nobody made in the run. It now runs on the holder (below).
  step('create, one instance');
  const measured = async (scenario: string, setup: string, run: () => Promise<ClosedFigures>): Promise<Row> => {
    const { result, share } = await withMergeShare([a, b], run);
    return { scenario, setup, figures: result, merge: share };
  };
  // A lone instance merges its own creates: the scenario runs on whichever instance holds the indexer duty, as a
  // lone deployment's would (through the other one it measured creates whose merges another instance made).
  const holder = await indexerHolder([a, b]);
  const holding = holder ?? a;
  const loneSetup = holder === undefined ? 'one instance (no duty holder seen)' : 'one instance';
  rows.push(await measured('create', loneSetup, () => closedLoop(holding, postRequests)));
  await settle();
  // One caller, one create at a time (DESIGN §9: its p50 within 2 x the floor's): one instance now, the floor at the end.
  step('create at 1 connection, one instance');
  const loneBaton = await closedLoop(a, postRequests, 1);
  await settle();
  step('create, two instances round-robin');
  rows.push(await measured('create', 'two, round-robin', () => closedLoopAcross([a, b].map((server) => ({ server, requests: () => postRequests(), connections: half })))));
  await settle();
  step('create, two instances with task affinity');
  rows.push(
    await measured('create', 'two, affinity', () =>
      closedLoopAcross([a, b].map((server, side) => ({ server, requests: () => postRequests('/v1/checkpoints', (i) => affineTask(i, side)), connections: half }))),
    ),
  );
  await settle();

  const writers = CONTENTION_WRITERS;
  const halfWriters = Math.max(1, Math.floor(writers / 2));
  step(`contention, one instance (${writers} writers of one task beside ${writers} of others)`);
  const contendedOne = await measured('contention', 'one instance', () =>
    closedLoopAcross([
      { server: a, requests: hotRequests('fleet-hot-one'), connections: writers },
      { server: a, requests: () => postRequests(), connections: writers },
    ]),
  );
  await settle();
  step('contention, two instances round-robin');
  const contendedRr = await measured('contention', 'two, round-robin', () =>
    closedLoopAcross([
      { server: a, requests: hotRequests('fleet-hot-rr'), connections: halfWriters },
      { server: b, requests: hotRequests('fleet-hot-rr'), connections: halfWriters },
      { server: a, requests: () => postRequests(), connections: halfWriters },
      { server: b, requests: () => postRequests(), connections: halfWriters },
    ]),
  );
  await settle();
  step('contention, two instances with task affinity');
  const contendedAffinity = await measured('contention', 'two, affinity', () =>
    closedLoopAcross([
      { server: a, requests: hotRequests('fleet-hot-affinity'), connections: writers },
      { server: b, requests: () => postRequests('/v1/checkpoints', (i) => affineTask(i, 1)), connections: writers },
    ]),
  );
  await settle();
  // The hot task's share alone: its history tells how many of its creates committed in the measured run and its warm-up.
  const hotCommitted = async (task: string): Promise<number> => {
    let count = 0;
    for (let cursor: string | undefined, more = true; more; ) {
      const res = await fetch(`${a.url}/v1/tasks/${task}/checkpoints?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const page = (await res.json()) as { items: unknown[]; nextCursor?: string };
      count += page.items.length;
      cursor = page.nextCursor;
      more = cursor !== undefined;
    }
    return count;
  };
  const hot = {
    one: await hotCommitted('fleet-hot-one'),
    roundRobin: await hotCommitted('fleet-hot-rr'),
    affinity: await hotCommitted('fleet-hot-affinity'),
  };
  rows.push(contendedOne, contendedRr, contendedAffinity);

  step(`paced creates (${RATE}/s): one instance, two round-robin, two with affinity`);
  const one = await paced([a], (k) => ({ target: a, task: taskId(k) }));
  const roundRobin = await settle().then(() => paced([a, b], (k) => ({ target: k % 2 === 0 ? a : b, task: taskId(k) })));
  const affinity = await settle().then(() => paced([a, b], (k) => ({ target: (k % OPEN_TASKS) % 2 === 0 ? a : b, task: taskId(k) })));
  await settle();

  step('the floor on FoundationDB: closed loop, one caller, paced');
  rows.unshift({ scenario: 'create', setup: 'floor (one FDB transaction)', figures: await closedLoop(bare, () => postRequests('/floor-fdb/checkpoints')) });
  await settle();
  const lone = { floor: await closedLoop(bare, () => postRequests('/floor-fdb/checkpoints'), 1), baton: loneBaton };
  await settle();
  const open = { floor: await paced([bare], (k) => ({ target: bare, task: taskId(k) }), '/floor-fdb/checkpoints'), one, roundRobin, affinity };

  // --- Figures.
  console.log('');
  console.log('closed loop                                    ok/s     p50 ms    p99 ms   non-2xx   503   Baton CPU µs/req   cluster CPU µs/req   merged / created');
  for (const { scenario, setup, figures, merge } of rows) {
    const merged = merge === undefined || merge.created === 0 ? '—' : `${merge.merged} / ${merge.created}`;
    console.log(
      `${`${scenario}, ${setup}`.padEnd(42)} ${fixed(figures.okPerSec, 0).padStart(9)} ${fixed(figures.p50Ms, 1).padStart(10)} ${fixed(figures.p99Ms, 1).padStart(9)} ${String(figures.non2xx).padStart(9)} ${String(figures.statusCodes['503'] ?? 0).padStart(5)} ${fixed(figures.cpu.serverUsPerReq, 0).padStart(12)} ${(figures.cpu.clusterUsPerReq === undefined ? '—' : fixed(figures.cpu.clusterUsPerReq, 0)).padStart(20)} ${merged.padStart(18)}`,
    );
  }
  const floorRate = rows[0]!.figures.okPerSec;
  console.log('');
  for (const row of rows.slice(1, 4)) console.log(`  creates / floor, ${row.setup.padEnd(20)} ${fixed(row.figures.okPerSec / floorRate, 3)}`);
  console.log(
    `  one caller (1 connection): create p50 ${fixed(lone.baton.p50Ms, 2)} ms (${fixed(lone.baton.okPerSec, 0)}/s, ${fixed(lone.baton.cpu.serverUsPerReq, 0)} µs CPU) / floor p50 ${fixed(lone.floor.p50Ms, 2)} ms (${fixed(lone.floor.okPerSec, 0)}/s) = ${fixed(lone.baton.p50Ms / lone.floor.p50Ms, 2)} x   target <= 2 x`,
  );
  console.log(`  hot task's creates committed (warm-up and run): one instance ${hot.one}, round-robin ${hot.roundRobin}, affinity ${hot.affinity}`);
  console.log(`  waits for the cluster's queues after each scenario (s): ${quietWaits.map((ms) => (ms / 1000).toFixed(1)).join(', ')}`);
  console.log('');
  console.log(`paced ${RATE} creates/s                     p50 ms    p99 ms    errors   non-2xx`);
  for (const [name, run] of Object.entries(open)) {
    const create = run.streams.create!;
    console.log(`  ${name.padEnd(34)} ${fixed(create.p50Ms, 1).padStart(9)} ${fixed(create.p99Ms, 1).padStart(9)} ${String(create.errors).padStart(9)} ${String(create.non2xx).padStart(9)}`);
  }
  console.log(`RESULT ${JSON.stringify({ seconds: SECONDS, connections: CONNECTIONS, rate: RATE, bodies: BODIES, closed: rows, lone, hot, open: Object.fromEntries(Object.entries(open).map(([k, v]) => [k, v.streams.create])) })}`);
}

runMain(main, cleanup);
