/**
 * HTTP benchmark (DESIGN §9): the real Baton server and a bare Fastify route
 * with the same payloads (`bare-server.ts`), each in its own child process,
 * driven from this process over loopback, measured in the same run so that
 * every target is a ratio against the bare route.
 *
 *   npm run bench:http             (= npx tsx loadtest/http-bench.ts)
 *
 * Closed loop (autocannon, BENCH_CONNECTIONS connections, each scenario
 * BENCH_SECONDS after a discarded warm-up):
 *   create        POST /v1/checkpoints, ~2 KB bodies, unique content, task ids
 *                 round-robin over 1,000 tasks (1,000 concurrent open tasks)
 *   bare POST     the same bodies to the bare route
 *   floor create  the same bodies to the bare server's floor route: validation,
 *                 canonical JSON, SHA-256 and one fsynced LMDB put, nothing else
 *   get           GET /v1/checkpoints/:id over 2,000 pre-created checkpoints
 *   bare GET      the same paths; the bare route answers a real Baton checkpoint
 *   patch         PATCH /v1/checkpoints/:id with If-Match; no two requests in
 *                 flight share a checkpoint, the next If-Match is the ETag of
 *                 the previous answer; 200 and 412 are counted
 *   handoff       BENCH_HANDOFF_WORKERS agents (default 20), each on its own task in a
 *                 loop: create, then handoff + ack timed together; the create's p99
 *                 from the same loop is the yardstick (DESIGN §9: p99 <= 3x)
 *   queued create the create scenario with the store made unavailable, against a Baton of
 *                 its own started with --enable-fault-injection (the others run as
 *                 `npm start` does): every create is answered 202 from the fsynced
 *                 local queue; then the store comes back and the replay is timed
 *   history(100)  GET /v1/tasks/:taskId/checkpoints?limit=100 on 5 tasks with
 *                 120 checkpoints each, at BENCH_CONNECTIONS and at 1 connection
 *   create traced the create scenario against a second Baton exporting every span
 *                 (OTEL_EXPORTER_OTLP_ENDPOINT, http/protobuf, always sampled) to a local
 *                 OTLP receiver: what tracing on costs, beside tracing off (the first
 *                 Baton has no endpoint, so the SDK is not even loaded)
 *   create sealed the create scenario against a Baton with encryption at rest
 *                 (BATON_ENCRYPTION_KEY_FILE): every value AES-256-GCM sealed, index
 *                 words blinded with HMAC-SHA-256; what encryption costs (target <= 15 %).
 *                 Traced and sealed creates are each compared with a fresh plain twin
 *                 of Baton, in alternating runs (twin, other, twin, other): the VM's
 *                 speed drifts within a run, and both sides of a ratio see the same drift
 *   contention    BENCH_CONTENTION_WRITERS connections (default 32) all creating
 *                 checkpoints of ONE task: every write reads and writes the task
 *                 head, so on FoundationDB they conflict and are retried; any
 *                 503 (task_contended) is counted
 * Open loop (no autocannon): evenly paced BENCH_OPEN_CREATES creates/s and
 * BENCH_OPEN_READS reads/s for BENCH_SECONDS, each request timed from its
 * intended send time, against Baton, against the bare routes, and against the
 * bare server with its creates sent to the floor route. In both loops (and
 * the handoff scenario) a request that errors or times out counts in the
 * percentiles as an over-limit latency (the 10 s request timeout), and the
 * count is printed in the tables and beside the p99 ratios.
 *
 * Environment:
 *   BENCH_BODIES           `evolving` (default): each task's next checkpoint moves on from its
 *                          last as an agent's does (a step done, a new one in new words, now and
 *                          then a decision or a file; seeded), the bodies DESIGN §9 judges on;
 *                          `same`: the same items and decisions in every checkpoint of a task.
 *                          A run of same-text creates is printed beside either way
 *   BENCH_SECONDS          measured seconds per scenario (default 8)
 *   BENCH_WARMUP_SECONDS   discarded warm-up per scenario (default min(2, BENCH_SECONDS / 4))
 *   BENCH_CONNECTIONS      autocannon connections (default 100)
 *   BENCH_PAIRED_ROUNDS    alternating rounds of the traced and sealed comparisons (default 4)
 *   BENCH_OPEN_CREATES     open-loop creates per second (default 500)
 *   BENCH_OPEN_READS       open-loop reads per second (default 2000)
 *   BENCH_RATE_LIMIT_PER_MINUTE  Baton's per-token rate limit for the run
 *                          (default 1000000000: the limiter runs but never refuses;
 *                          the service's own default, 100000/min, is 1,667 requests/s
 *                          for the one token the benchmark uses)
 *   BENCH_INDEXER_SECONDS  seconds of the indexer scenario (default 60; 0 skips it): closed-loop
 *                          creates with the full-text pending list's backlog printed every 5 s,
 *                          then the time it takes to empty (`lib/indexer-scenario.ts`)
 *   BENCH_CPU_PROF_DIR     run Baton with --cpu-prof, writing the profile there
 *   BATON_STORE, FDB_CLUSTER_FILE  the store Baton runs on (default LMDB in a temp
 *                          dir); on FoundationDB each run keys everything under a
 *                          fresh BATON_FDB_PREFIX (each further Baton its own).
 *                          The floor route stays on LMDB.
 *
 * Prints aligned tables and, last, one line `RESULT {json}` with every figure.
 * Nothing here asserts on time. Children are stopped and temp dirs removed at
 * the end, on error and on SIGINT/SIGTERM.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { indexerScenario, INDEXER_SECONDS } from './lib/indexer-scenario.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, tmpdir } from 'node:os';
import { loadConfig } from '../src/config.js';
import { fastifyOptions } from '../src/http/plugins/index.js';
import { onInterrupt, runMain, TempDirs } from './lib/cleanup.js';
import { call, serverMetric } from './lib/http-client.js';
import {
  ADMIN_TOKEN,
  CONNECTIONS,
  CONTENTION_WRITERS,
  CPU_PROF_DIR,
  HANDOFF_WORKERS,
  HISTORY_LIMIT,
  OPEN_CREATES,
  OPEN_READS,
  OPEN_TASKS,
  PREP_CONCURRENCY,
  QUEUE_MAX_BYTES,
  RATE_LIMIT,
  SECONDS,
  TOKEN,
  WARMUP_SECONDS,
} from './lib/http-config.js';
import { setUpDataSet } from './lib/http-data-set.js';
import { checkpointBody, taskId, useBodies, type BodyKind } from './lib/http-payloads.js';
import { closedTable, closedUnansweredNote, openTable, pct, times, unansweredNote, verdict } from './lib/http-report.js';
import { closedLoop, getRequests, historyRequests, postRequests, type ClosedFigures } from './lib/http-scenarios.js';
import { openLoopMeasured, type OpenRun } from './lib/open-loop.js';
import { fsyncProbe, waitForQuietDisk, type QuietDisk } from './lib/fsync-probe.js';
import { startOtlpSink } from './lib/otlp-sink.js';
import { handoffScenario } from './lib/handoff-scenario.js';
import { PatchScenario } from './lib/patch-scenario.js';
import { queueScenario } from './lib/queue-scenario.js';
import { memoryOf, type Memory } from './lib/proc.js';
import { BATON_MAIN, killServers, startServer, stopServers } from './lib/servers.js';
import { OVER_LIMIT_MS, round } from './lib/stats.js';
import { fixed } from './lib/tables.js';

// Servers and temp dirs are stopped and removed whatever happens: at the end,
// on an error, on SIGINT/SIGTERM, and (SIGKILL, synchronously) on exit.
const tempDirs = new TempDirs('baton-http-bench');

async function cleanup(): Promise<void> {
  await stopServers();
  tempDirs.removeAll();
}

onInterrupt(cleanup, (signal) => console.error(`\n${signal}: stopping the servers and removing temp dirs`));
process.on('exit', () => {
  killServers();
  tempDirs.removeAll();
});

// ---------------------------------------------------------------------------

/** Rounds of `paired`: each side runs this many closed loops, alternating (BENCH_PAIRED_ROUNDS). */
const PAIRED_ROUNDS = Math.max(1, Number(process.env.BENCH_PAIRED_ROUNDS ?? 4));

/**
 * Closed loops of creates against `plain` and `other`, alternating (plain,
 * other, plain, other, …): figures summed over each side's runs.
 */
async function paired(plain: Parameters<typeof closedLoop>[0], other: Parameters<typeof closedLoop>[0]) {
  const runs: { plain: ClosedFigures[]; other: ClosedFigures[] } = { plain: [], other: [] };
  for (let round = 0; round < PAIRED_ROUNDS; round++) {
    runs.plain.push(await closedLoop(plain, postRequests));
    runs.other.push(await closedLoop(other, postRequests));
  }
  const rate = (list: ClosedFigures[]) => round(list.reduce((sum, r) => sum + r.ok, 0) / list.reduce((sum, r) => sum + r.seconds, 0), 1);
  const loopUs = (list: ClosedFigures[]) => round(list.reduce((sum, r) => sum + r.cpu.eventLoopUsPerReq * r.requests, 0) / list.reduce((sum, r) => sum + r.requests, 0), 1);
  const plainRate = rate(runs.plain);
  const otherRate = rate(runs.other);
  return { rounds: PAIRED_ROUNDS, plain: runs.plain, other: runs.other, plainRate, otherRate, ratio: otherRate / plainRate, plainLoopUs: loopUs(runs.plain), otherLoopUs: loopUs(runs.other) };
}

const BODIES: BodyKind = process.env.BENCH_BODIES === 'same' ? 'same' : 'evolving';

async function main(): Promise<void> {
  const dataDir = tempDirs.make('data');
  const batonEnv: Record<string, string> = {
    BATON_DATA_DIR: dataDir,
    BATON_TOKENS: `writer:${TOKEN},admin:${ADMIN_TOKEN}`,
    BATON_QUEUE_MAX_BYTES: String(QUEUE_MAX_BYTES),
    BATON_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    // As `npm start` runs by default: a line for each write; warnings and errors are counted apart (`lib/servers.ts`).
    LOG_LEVEL: 'info',
    PORT: '0',
    HOST: '127.0.0.1',
    BATON_STORE: process.env.BATON_STORE || 'lmdb',
    // Runs on one cluster never see each other's keys.
    ...(process.env.BATON_STORE === 'fdb' ? { BATON_FDB_PREFIX: `bench-${Date.now()}-${process.pid}` } : {}),
  };
  /**
   * A store of its own for each further Baton (twin, traced, sealed): a data directory, and on FoundationDB a
   * prefix of its own. Sharing the first Baton's keys would make them one fleet, and the sealed one's values,
   * sealed with a key the others lack, would be unreadable to them (their queued writes would wait for it).
   */
  const ownStore = (name: string): Record<string, string> => ({
    BATON_DATA_DIR: tempDirs.make(name),
    ...(batonEnv.BATON_FDB_PREFIX !== undefined ? { BATON_FDB_PREFIX: `${batonEnv.BATON_FDB_PREFIX}-${name}` } : {}),
  });
  // The same body limit as Baton's (fastifyOptions derives it from the checkpoint size limit).
  const bodyLimit = fastifyOptions(loadConfig({ ...process.env, ...batonEnv })).bodyLimit;
  const sampleBytes = Buffer.byteLength(checkpointBody(taskId(0), 0));
  useBodies(BODIES);
  console.log(
    `http bench: ${SECONDS} s per scenario after ${WARMUP_SECONDS} s warm-up, ${CONNECTIONS} connections, ` +
      `${OPEN_TASKS} open tasks, ${BODIES} bodies (same-text body ${sampleBytes} B), body limit ${bodyLimit} B, ` +
      `rate limit ${RATE_LIMIT}/min, store ${batonEnv.BATON_STORE}, node ${process.version}, ${cpus().length} CPUs`,
  );

  // The disk's floor, before any load: a create cannot answer before its commit's fsync.
  const fsync = fsyncProbe(dataDir);
  console.log(`disk: one 4 KiB write + fdatasync in the data dir p50/p99 ${fixed(fsync.p50Ms, 2)}/${fixed(fsync.p99Ms, 2)} ms, ${fsync.perSec}/s one at a time`);

  const cpuProfArgs = CPU_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF_DIR] : [];
  const [baton, bare] = await Promise.all([
    // As `npm start` runs it: a store wrapped to inject faults lends nothing to the merge thread (its writes come back
    // to the event loop) and commits nothing on the event loop, so the queued create has a Baton of its own.
    startServer('baton', BATON_MAIN, batonEnv, '/readyz', cpuProfArgs),
    startServer('bare', 'loadtest/bare-server.ts', { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', BARE_BODY_LIMIT: String(bodyLimit), BARE_FLOOR_DIR: tempDirs.make('floor') }, '/v1/checkpoints/x'),
  ]);
  console.log(`baton pid ${baton.child.pid} at ${baton.url} (data ${dataDir}); bare pid ${bare.child.pid} at ${bare.url}`);
  const memorySamples: Memory[] = [];
  const sampleMemory = (): void => {
    const m = memoryOf(baton.child.pid);
    if (m) memorySamples.push(m);
  };

  // --- Setup: checkpoints to read, to patch, and five long histories.
  const { readIds, patchSlots, getPayload, historyPage, checkpoints: prepared, seconds: prepSeconds } = await setUpDataSet(baton.url, bare.url);
  console.log(
    `setup: ${prepared} checkpoints in ${prepSeconds.toFixed(1)} s (${PREP_CONCURRENCY} concurrent fetches); ` +
      `GET payload ${Buffer.byteLength(getPayload)} B, history page ${Buffer.byteLength(historyPage)} B`,
  );
  sampleMemory();

  // --- Closed loop.
  const rows: [string, string, ClosedFigures][] = [];
  const step = (name: string): void => {
    process.stderr.write(`  running ${name}…\n`);
  };
  // Every create scenario sends evolving bodies (the targets are judged on them); one run of the same text beside, for reference.
  step('create, the same text in every checkpoint of a task');
  useBodies('same');
  const createSame = await closedLoop(baton, postRequests);
  rows.push(['create same text', 'baton', createSame]);
  useBodies(BODIES);
  step(`create (${BODIES} bodies)`);
  const create = await closedLoop(baton, postRequests);
  rows.push(['create', 'baton', create]);
  sampleMemory();
  step('bare POST');
  const barePost = await closedLoop(bare, postRequests);
  rows.push(['POST', 'bare', barePost]);
  step('floor create (bare route + validation + canonical JSON + SHA-256 + one fsynced LMDB put)');
  const floor = await closedLoop(bare, () => postRequests('/floor/checkpoints'));
  rows.push(['floor create', 'bare', floor]);
  // DESIGN §9: one caller, one create at a time (an agent alone, a LangGraph saver): p50 within 2 x the floor's.
  step('create at 1 connection, then the floor create at 1 connection');
  const create1 = await closedLoop(baton, postRequests, 1);
  rows.push(['create', 'baton', create1]);
  const floor1 = await closedLoop(bare, () => postRequests('/floor/checkpoints'), 1);
  rows.push(['floor create', 'bare', floor1]);
  step('get');
  const get = await closedLoop(baton, getRequests(readIds));
  rows.push(['get', 'baton', get]);
  sampleMemory();
  step('bare GET');
  // Seed again: the bare POST run left its last body there.
  await call(`${bare.url}/v1/checkpoints`, { method: 'POST', body: getPayload });
  const bareGet = await closedLoop(bare, getRequests(readIds));
  rows.push(['GET', 'bare', bareGet]);
  step('patch');
  const patchScenario = new PatchScenario(baton.url, patchSlots);
  const patch = await closedLoop(
    baton,
    () => patchScenario.requests(),
    CONNECTIONS,
    () => patchScenario.resync(),
  );
  patch.extra = { ...patchScenario.counts };
  rows.push(['patch', 'baton', patch]);
  sampleMemory();
  step(`handoff + ack (${HANDOFF_WORKERS} agents at once, each create → handoff → ack)`);
  const handoffs = await handoffScenario(baton);
  sampleMemory();
  step('history(100)');
  const history = await closedLoop(baton, historyRequests);
  rows.push([`history(${HISTORY_LIMIT})`, 'baton', history]);
  step('history(100) at 1 connection');
  const history1 = await closedLoop(baton, historyRequests, 1);
  rows.push([`history(${HISTORY_LIMIT})`, 'baton', history1]);
  sampleMemory();
  // Tracing and encryption are each compared with a twin of the plain Baton started beside them, in alternating
  // runs (plain, other, plain, other): this VM's speed drifts within a run, and both sides must see the same drift.
  const twin = await startServer('baton-twin', BATON_MAIN, { ...batonEnv, ...ownStore('twin') }, '/readyz');
  step('create with tracing on (every span exported over OTLP/HTTP to a local receiver), alternating with a plain twin');
  const sink = await startOtlpSink();
  const traced = await startServer(
    'baton-traced',
    BATON_MAIN,
    { ...batonEnv, ...ownStore('traced'), OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint, OTEL_TRACES_SAMPLER: 'always_on', OTEL_SERVICE_NAME: 'baton-bench' },
    '/readyz',
  );
  const tracing = await paired(twin, traced);
  const createTraced = tracing.other.at(-1)!;
  rows.push(['create traced', 'baton', createTraced]);
  const exported = { requests: sink.requests(), bytes: sink.bytes() };
  traced.child.kill('SIGTERM');
  await sink.close();
  step('create with encryption at rest (every value sealed, index words blinded), alternating with the plain twin');
  const keyDir = tempDirs.make('keys');
  writeFileSync(join(keyDir, 'keys'), `bench:${randomBytes(32).toString('base64')}\n`);
  const sealed = await startServer('baton-sealed', BATON_MAIN, { ...batonEnv, ...ownStore('sealed'), BATON_ENCRYPTION_KEY_FILE: join(keyDir, 'keys') }, '/readyz');
  const sealing = await paired(twin, sealed);
  const createSealed = sealing.other.at(-1)!;
  rows.push(['create sealed', 'baton', createSealed]);
  sealed.child.kill('SIGTERM');
  twin.child.kill('SIGTERM');
  step(`contention (${CONTENTION_WRITERS} writers creating checkpoints of one task)`);
  const contention = await closedLoop(baton, () => postRequests('/v1/checkpoints', () => 'bench-contended-task'), CONTENTION_WRITERS);
  rows.push([`contention x${CONTENTION_WRITERS}`, 'baton', contention]);

  // --- Open loop. Each starts once the disk answers fsyncs as it did before any load (the scenarios above wrote gigabytes).
  const probeDir = tempDirs.make('probe');
  const quiet: QuietDisk[] = [];
  step(`open loop against bare (${OPEN_CREATES} POST/s + ${OPEN_READS} GET/s)`);
  await call(`${bare.url}/v1/checkpoints`, { method: 'POST', body: getPayload });
  // Bare first: its POSTs replace the GET payload with create bodies of about the same size.
  quiet.push(await waitForQuietDisk(probeDir, fsync.p99Ms));
  const openBare = await openLoopMeasured(bare, readIds);
  step(`open loop against the floor (${OPEN_CREATES} floor creates/s + ${OPEN_READS} bare GET/s)`);
  await call(`${bare.url}/v1/checkpoints`, { method: 'POST', body: getPayload });
  quiet.push(await waitForQuietDisk(probeDir, fsync.p99Ms));
  const openFloor = await openLoopMeasured(bare, readIds, '/floor/checkpoints');
  step(`open loop against baton (${OPEN_CREATES} creates/s + ${OPEN_READS} reads/s)`);
  quiet.push(await waitForQuietDisk(probeDir, fsync.p99Ms));
  // What the scenarios before it left: the open loop is judged on a steady load, and these say what it started from.
  const before = { backlog: await serverMetric(baton, 'indexer_backlog'), heapMB: (await serverMetric(baton, 'nodejs_heap_size_used_bytes')) / 2 ** 20 };
  const openBaton = await openLoopMeasured(baton, readIds);
  sampleMemory();

  const memoryEnd = memoryOf(baton.child.pid);
  const bareMemory = memoryOf(bare.child.pid);
  const warnings = baton.lines.slice();

  step(`indexer: ${INDEXER_SECONDS} s of creates (${BODIES} bodies), the full-text pending list's backlog every 5 s`);
  const indexer = INDEXER_SECONDS > 0 ? await indexerScenario(baton) : undefined;

  // Last: a burst of tens of thousands of queued writes and their replay grow the store and the heap, which would colour what follows.
  step('queued create (store made unavailable: every create answered 202 from the fsynced local queue), then the replay');
  let queue: Awaited<ReturnType<typeof queueScenario>> | undefined;
  if (process.env.BENCH_QUEUE !== '0') {
    const queueing = await startServer('baton-queue', BATON_MAIN, { ...batonEnv, ...ownStore('queue') }, '/readyz', [], ['--enable-fault-injection']);
    queue = await queueScenario(queueing);
    queueing.child.kill('SIGTERM');
  }
  if (queue) rows.push(['queued create', 'baton', queue.queued]);


  // --- Figures.
  const ratios = {
    createRateVsBarePost: create.okPerSec / barePost.okPerSec,
    createP99VsBarePostP99: create.p99Ms / barePost.p99Ms,
    createCpuPerReqVsBarePost: create.cpu.serverUsPerReq / barePost.cpu.serverUsPerReq,
    createRateVsFloor: create.okPerSec / floor.okPerSec,
    createSameTextRateVsFloor: createSame.okPerSec / floor.okPerSec,
    floorRateVsBarePost: floor.okPerSec / barePost.okPerSec,
    getRateVsBareGet: get.okPerSec / bareGet.okPerSec,
    getP99VsBareGetP99: get.p99Ms / bareGet.p99Ms,
    handoffAckP99VsCreateP99: handoffs.handoffAck.p99Ms / handoffs.create.p99Ms,
    queuedRateVsCreateRate: queue ? queue.queued.okPerSec / create.okPerSec : NaN,
    queuedP99VsCreateP99: queue ? queue.queued.p99Ms / create.p99Ms : NaN,
    historyP50Ms: history.p50Ms,
    historyP50MsOneConnection: history1.p50Ms,
    createP50OneCallerVsFloor: create1.p50Ms / floor1.p50Ms,
    openCreateP99VsBare: openBaton.streams.create!.p99Ms / openBare.streams.create!.p99Ms,
    openReadP99VsBare: openBaton.streams.read!.p99Ms / openBare.streams.read!.p99Ms,
    openAllP99VsBare: openBaton.all.p99Ms / openBare.all.p99Ms,
    openFloorCreateP99VsBare: openFloor.streams.create!.p99Ms / openBare.streams.create!.p99Ms,
    openFloorAllP99VsBare: openFloor.all.p99Ms / openBare.all.p99Ms,
  };
  const peakRss = Math.max(...memorySamples.map((m) => m.rssMB), memoryEnd?.rssMB ?? 0);

  console.log('');
  console.log(closedTable(rows));
  console.log(
    `patch: ${patch.extra.ok200} x 200, ${patch.extra.conflict412} x 412, ${patch.extra.other} other, ` +
      `${patch.extra.resyncs} re-reads, ${patch.extra.poolEmpty} pool-empty (a 412 here means a lost or wrong version)`,
  );
  console.log(
    `tracing: creates with every span exported ${fixed(tracing.otherRate, 0)}/s vs its plain twin ${fixed(tracing.plainRate, 0)}/s = ${pct(tracing.ratio)} ` +
      `(${tracing.rounds} alternating rounds; DESIGN §9: on costs at most 10 %: ${verdict(tracing.ratio >= 0.9)}); ${exported.requests} OTLP requests, ${exported.bytes} bytes received`,
  );
  console.log(
    `encryption: creates sealed ${fixed(sealing.otherRate, 0)}/s vs its plain twin ${fixed(sealing.plainRate, 0)}/s = ${pct(sealing.ratio)} ` +
      `(${sealing.rounds} alternating rounds; issue 19: encryption costs at most 15 %: ${verdict(sealing.ratio >= 0.85)}); loop ${fixed(sealing.otherLoopUs, 0)} vs ${fixed(sealing.plainLoopUs, 0)} us/req`,
  );
  console.log(
    `contention: ${CONTENTION_WRITERS} writers of one task, ${fixed(contention.okPerSec, 0)} creates/s, p50/p99 ${fixed(contention.p50Ms, 2)}/${fixed(contention.p99Ms, 2)} ms, ` +
      `statuses ${JSON.stringify(contention.statusCodes)} (a 503 is task_contended: conflicts outlasted BATON_TRANSACTION_DEADLINE_MS)`,
  );
  console.log('');
  console.log(openTable([['bare', openBare], ['floor', openFloor], ['baton', openBaton]]));
  console.log(`open loop: baton started it with ${before.backlog} checkpoints unmerged and ${fixed(before.heapMB, 0)} MB of its heap in use`);
  console.log(
    `open loop: each began once the disk's fsync p99 was within 2 x its ${fixed(fsync.p99Ms, 2)} ms before any load (bare, floor, baton: ` +
      quiet.map((q) => `${q.quiet ? '' : 'NOT QUIET, '}waited ${q.waitedSeconds} s, p99 ${fixed(q.firstP99Ms, 2)} -> ${fixed(q.lastP99Ms, 2)} ms`).join('; ') +
      ')',
  );
  console.log(
    `open loop: send lag behind schedule p50/p99/max bare ${fixed(openBare.schedulerLag.p50Ms, 2)}/${fixed(openBare.schedulerLag.p99Ms, 2)}/${fixed(openBare.schedulerLag.maxMs, 1)} ms, ` +
      `baton ${fixed(openBaton.schedulerLag.p50Ms, 2)}/${fixed(openBaton.schedulerLag.p99Ms, 2)}/${fixed(openBaton.schedulerLag.maxMs, 1)} ms; ` +
      `max in flight bare ${openBare.maxInFlight}, baton ${openBaton.maxInFlight}`,
  );
  console.log('');
  console.log('ratios (DESIGN §9)');
  console.log(`  create rate / bare POST rate        ${pct(ratios.createRateVsBarePost).padStart(9)}   target >= 40 %: ${verdict(ratios.createRateVsBarePost >= 0.4)}`);
  console.log(`  create p99 / bare POST p99          ${times(ratios.createP99VsBarePostP99).padStart(9)}   ${closedUnansweredNote(create, barePost)}`);
  console.log(
    `  create / bare POST server CPU/req   ${times(ratios.createCpuPerReqVsBarePost).padStart(9)}   (${fixed(create.cpu.serverUsPerReq, 0)} vs ${fixed(barePost.cpu.serverUsPerReq, 0)} us, all threads)`,
  );
  console.log(
    `  floor create rate / bare POST rate  ${pct(ratios.floorRateVsBarePost).padStart(9)}   (the least a durable create costs here: ${fixed(floor.okPerSec, 0)}/s, ` +
      `event loop ${fixed(floor.cpu.eventLoopUsPerReq, 0)} us/req; Baton's create ${fixed(create.cpu.eventLoopUsPerReq, 0)} us/req)`,
  );
  console.log(`  create rate / floor create rate      ${pct(ratios.createRateVsFloor).padStart(9)}   target >= 60 % (${BODIES} bodies): ${verdict(ratios.createRateVsFloor >= 0.6)}`);
  console.log(`  same-text create rate / floor rate  ${pct(ratios.createSameTextRateVsFloor).padStart(9)}   (reference: ${fixed(createSame.okPerSec, 0)}/s)`);
  console.log(`  get rate / bare GET rate            ${pct(ratios.getRateVsBareGet).padStart(9)}`);
  console.log(`  get p99 / bare GET p99              ${times(ratios.getP99VsBareGetP99).padStart(9)}   ${closedUnansweredNote(get, bareGet)}`);
  if (queue) {
    console.log(
      `  queued create (202) rate / create     ${times(ratios.queuedRateVsCreateRate).padStart(9)}   (fsynced appends ${fixed(queue.queued.okPerSec, 0)}/s, 202 p50/p99 ${fixed(queue.queued.p50Ms, 2)}/${fixed(queue.queued.p99Ms, 2)} ms ` +
        `beside create ${fixed(create.okPerSec, 0)}/s, p50/p99 ${fixed(create.p50Ms, 2)}/${fixed(create.p99Ms, 2)} ms; replay of ${queue.depth} writes took ${queue.drainSeconds} s, ${queue.drainPerSec}/s, highest RSS sampled while draining ${fixed(queue.peakRssMB, 0)} MB)`,
    );
  }
  console.log(
    `  handoff+ack p99 / create p99        ${times(ratios.handoffAckP99VsCreateP99).padStart(9)}   target <= 3x: ${verdict(ratios.handoffAckP99VsCreateP99 <= 3)} ` +
      `(${HANDOFF_WORKERS} agents: handoff+ack p50/p99 ${fixed(handoffs.handoffAck.p50Ms, 2)}/${fixed(handoffs.handoffAck.p99Ms, 2)} ms, ` +
      `create p50/p99 ${fixed(handoffs.create.p50Ms, 2)}/${fixed(handoffs.create.p99Ms, 2)} ms, ${handoffs.cyclesPerSec} cycles/s, ${handoffs.failures} failed, each failed step counted as ${OVER_LIMIT_MS} ms)`,
  );
  console.log(
    `  one caller's create p50 / floor's      ${times(create1.p50Ms / floor1.p50Ms).padStart(9)}   target <= 2x: ${verdict(create1.p50Ms <= 2 * floor1.p50Ms)} (${fixed(create1.p50Ms, 2)} vs ${fixed(floor1.p50Ms, 2)} ms, 1 connection)`,
    `  history(${HISTORY_LIMIT}) p50, 1 connection       ${`${fixed(history1.p50Ms, 2)} ms`.padStart(9)}   target < 5 ms: ${verdict(history1.p50Ms < 5)}`,
  );
  console.log(
    `  history(${HISTORY_LIMIT}) p50, ${CONNECTIONS} connections    ${`${fixed(history.p50Ms, 2)} ms`.padStart(9)}   target < 5 ms: ${verdict(history.p50Ms < 5)} (includes queueing behind ${CONNECTIONS - 1} others)`,
  );
  const scheduled = (run: OpenRun): number => Object.values(run.streams).reduce((sum, f) => sum + f.scheduled, 0);
  const openAll = (run: OpenRun) => ({ errors: run.errors, scheduled: scheduled(run) });
  console.log(
    `  open-loop create p99 / bare p99     ${times(ratios.openCreateP99VsBare).padStart(9)}   target <= 1.5x: ${verdict(ratios.openCreateP99VsBare <= 1.5)}; ` +
      unansweredNote(openBaton.streams.create!, openBare.streams.create!),
  );
  console.log(
    `  open-loop read p99 / bare p99       ${times(ratios.openReadP99VsBare).padStart(9)}   target <= 1.5x: ${verdict(ratios.openReadP99VsBare <= 1.5)}; ` +
      unansweredNote(openBaton.streams.read!, openBare.streams.read!),
  );
  console.log(
    `  open-loop all p99 / bare p99        ${times(ratios.openAllP99VsBare).padStart(9)}   target <= 1.5x: ${verdict(ratios.openAllP99VsBare <= 1.5)}; ` +
      unansweredNote(openAll(openBaton), openAll(openBare)),
  );
  console.log(
    `  open-loop floor p99 / bare p99      ${times(ratios.openFloorAllP99VsBare).padStart(9)}   (creates ${times(ratios.openFloorCreateP99VsBare)}: the same load with only validation, ` +
      `canonical JSON, SHA-256 and one fsynced put behind each create)`,
  );
  console.log(
    `memory: baton rss at end ${memoryEnd?.rssMB ?? '-'} MB (anon ${memoryEnd?.anonMB ?? '-'} MB, file-backed incl. LMDB map ${memoryEnd?.fileMB ?? '-'} MB), ` +
      `highest sampled ${peakRss} MB, peak (VmHWM) ${memoryEnd?.peakRssMB ?? '-'} MB ` +
      `(DESIGN §9: anonymous <= 150 MB, LMDB's map apart: ${verdict((memoryEnd?.anonMB ?? Infinity) <= 150)}); bare rss ${bareMemory?.rssMB ?? '-'} MB`,
  );
  if (warnings.length > 0) {
    console.log(`baton logged ${warnings.length} warning/error line(s) under load; first ones:`);
    for (const line of warnings.slice(0, 5)) console.log(`  ${line.slice(0, 400)}`);
  } else {
    console.log('baton logged no warnings or errors under load');
  }

  const result = {
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    connections: CONNECTIONS,
    openTasks: OPEN_TASKS,
    createBodyBytes: sampleBytes,
    getPayloadBytes: Buffer.byteLength(getPayload),
    historyPageBytes: Buffer.byteLength(historyPage),
    bodyLimit,
    rateLimitPerMinute: RATE_LIMIT,
    node: process.version,
    cpus: cpus().length,
    tmpdir: tmpdir(),
    setup: { checkpoints: prepared, seconds: round(prepSeconds, 2) },
    fsync,
    store: batonEnv.BATON_STORE,
    bodies: BODIES,
    closed: { create, createOneCaller: create1, floorOneCaller: floor1, createSameText: createSame, createTraced, barePost, floor, get, bareGet, patch, history, historyOneConnection: history1, contention },
    tracing: { exported, tracedVsOff: round(tracing.ratio, 4), plainRate: tracing.plainRate, tracedRate: tracing.otherRate },
    encryption: { sealedVsPlain: round(sealing.ratio, 4), plainRate: sealing.plainRate, sealedRate: sealing.otherRate, plainLoopUs: sealing.plainLoopUs, sealedLoopUs: sealing.otherLoopUs },
    handoffs,
    queue,
    indexer,
    open: { ratePerSec: { creates: OPEN_CREATES, reads: OPEN_READS }, quietDisk: quiet, bare: openBare, floor: openFloor, baton: openBaton },
    ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, round(v, 4)])),
    memory: { baton: memoryEnd, batonHighestSampledRssMB: peakRss, bare: bareMemory },
    batonWarnings: warnings.length,
  };

  await cleanup();
  if (indexer !== undefined) {
    console.log('');
    console.log(
      `indexer: ${fixed(indexer.seconds, 0)} s of creates at ${fixed(indexer.creates.okPerSec, 0)}/s (p99 ${fixed(indexer.creates.p99Ms, 1)} ms): ` +
        `backlog every 5 s ${indexer.backlog.join(', ')}; merged ${indexer.merged} of ${indexer.creates.ok} created; ` +
        `empty ${Number.isNaN(indexer.settleSeconds) ? 'not within 60 s' : `${fixed(indexer.settleSeconds, 1)} s`} after the load stopped`,
    );
  }
  if (CPU_PROF_DIR) console.log(`cpu profile of the baton server written under ${CPU_PROF_DIR}`);
  console.log(`RESULT ${JSON.stringify(result)}`);
}

runMain(main, cleanup);
