/**
 * Profiles the create path (or, with SCENARIO=get, the read path) alone: starts Baton with --cpu-prof, drives
 * BENCH_SECONDS of closed-loop creates at BENCH_CONNECTIONS, stops it and
 * prints the profile's top functions by self time, and by file.
 *
 *   npx tsx loadtest/profile-create.ts [outdir]
 *
 * SCENARIO=get profiles reads of 2,000 checkpoints; SCENARIO=history, pages
 * of 100 of the history tasks at one connection, as `bench:http` reads them.
 * SEALED=1 turns encryption at rest on (BATON_ENCRYPTION_KEY_FILE, a fresh key);
 * TRACED=1 exports every span to a local OTLP sink, as `bench:http` does.
 * NODE_FLAGS adds node flags after the start script's (V8 takes the last of
 * a flag given twice): `NODE_FLAGS="--heap-growing-percent=20"`. OPEN=1
 * runs `bench:http`'s open loop after the closed one and prints its
 * latency and the memory under it. ALLOCATIONS=1 samples every allocation
 * of the measured loop, collected objects included (`allocation-sampler.mjs`),
 * and prints the kilobytes a request by function. BENCH_BODIES: `evolving`
 * (the default, as `bench:http`) or `same`.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onInterrupt, TempDirs } from './lib/cleanup.js';
import { CONNECTIONS, TOKEN } from './lib/http-config.js';
import { concurrently, createCheckpoint } from './lib/http-client.js';
import { historyTaskId, taskId, useBodies } from './lib/http-payloads.js';
import { HISTORY_PER_TASK, HISTORY_TASKS } from './lib/http-config.js';
import { closedLoop, getRequests, historyRequests, postRequests } from './lib/http-scenarios.js';
import { summarize, type Profile } from './lib/profile-summary.js';
import { summarizeAllocations, type HeapProfile } from './lib/allocation-summary.js';
import { memoryOf } from './lib/proc.js';
import { openLoopMeasured } from './lib/open-loop.js';
import { startOtlpSink } from './lib/otlp-sink.js';
import { BATON_MAIN, killServers, startServer, stopServers } from './lib/servers.js';

const tempDirs = new TempDirs('baton-profile');
onInterrupt(async () => { await stopServers(); tempDirs.removeAll(); }, () => undefined);
process.on('exit', () => { killServers(); tempDirs.removeAll(); });

async function main(): Promise<void> {
  useBodies(process.env.BENCH_BODIES === 'same' ? 'same' : 'evolving');
  const out = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'prof-'));
  mkdirSync(out, { recursive: true });
  const dataDir = tempDirs.make('data');
  // SEALED=1: encryption at rest, as bench:http's sealed twin runs it.
  const sealed: Record<string, string> = {};
  if (process.env.SEALED === '1') {
    const keys = tempDirs.make('keys');
    writeFileSync(join(keys, 'keys'), `k1:${randomBytes(32).toString('base64')}\n`);
    sealed.BATON_ENCRYPTION_KEY_FILE = join(keys, 'keys');
  }
  // TRACED=1: every span exported to a local OTLP sink, as bench:http's traced twin runs it.
  const sink = process.env.TRACED === '1' ? await startOtlpSink() : undefined;
  const traced: Record<string, string> = sink === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint, OTEL_TRACES_SAMPLER: 'always_on', OTEL_SERVICE_NAME: 'baton-profile' };
  // ALLOCATIONS=1: the sampler loaded into the server, toggled by SIGUSR2 around the measured loop.
  const allocations = process.env.ALLOCATIONS === '1' ? join(out, 'allocations.heapprofile') : undefined;
  const baton = await startServer('baton', BATON_MAIN, {
    ...sealed,
    ...traced,
    ...(allocations === undefined ? {} : { BATON_ALLOCATIONS_FILE: allocations }),
    BATON_DATA_DIR: dataDir, BATON_TOKENS: `writer:${TOKEN}`, BATON_RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1',
  }, '/readyz', [
    ...(process.env.PROFILE === '0' ? [] : ['--cpu-prof', '--cpu-prof-dir', out]),
    ...(process.env.SNAPSHOT ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${out}`] : []),
    ...(allocations === undefined ? [] : ['--import', './loadtest/lib/allocation-sampler.mjs']),
    // After the start script's flags: V8 takes the last of a flag given twice.
    ...(process.env.NODE_FLAGS ?? '').split(' ').filter(Boolean),
  ]);
  const memory0 = memoryOf(baton.child.pid);
  // SCENARIO=get profiles reads of 2,000 checkpoints instead of creates.
  const ids = process.env.SCENARIO === 'get' || process.env.OPEN === '1' ? (await concurrently(2000, 32, (i) => createCheckpoint(baton.url, taskId(i)))).map((c) => c.id) : [];
  if (process.env.SCENARIO === 'history') await concurrently(HISTORY_TASKS * HISTORY_PER_TASK, 32, (i) => createCheckpoint(baton.url, historyTaskId(i % HISTORY_TASKS)));
  const scenario = { get: [getRequests(ids), CONNECTIONS], history: [historyRequests, 1] } as const;
  const [requests, connections] = scenario[process.env.SCENARIO as keyof typeof scenario] ?? [postRequests, CONNECTIONS];
  // closedLoop calls `before` ahead of its warm-up and again ahead of the measured run: sampling starts at the second.
  let befores = 0;
  const startSampling = async () => {
    if (allocations !== undefined && ++befores === 2) baton.child.kill('SIGUSR2');
  };
  const create = await closedLoop(baton, requests, connections, startSampling);
  if (allocations !== undefined) {
    baton.child.kill('SIGUSR2');
    const deadline = Date.now() + 30_000;
    while (!baton.output().includes('allocations written') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    console.log(summarizeAllocations(JSON.parse(readFileSync(allocations, 'utf8')) as HeapProfile, create.requests));
  }
  const memory1 = memoryOf(baton.child.pid);
  const metrics = await (await fetch(`${baton.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  const heap = metrics.split('\n').filter((line) => /^nodejs_(heap_size_(used|total)|external_memory)_bytes|^nodejs_heap_space_size_used_bytes/.test(line));
  if (process.env.SNAPSHOT) {
    baton.child.kill('SIGUSR2');
    await new Promise((resolve) => setTimeout(resolve, 15_000));
  }
  console.log(`memory before ${JSON.stringify(memory0)}, after ${JSON.stringify(memory1)}`);
  for (const line of heap) console.log(`  ${line.replace(/ (\d+)$/, (_, b: string) => ` ${(Number(b) / 2 ** 20).toFixed(1)} MB`)}`);
  console.log(`${process.env.SCENARIO ?? 'create'} ${create.okPerSec.toFixed(0)}/s p50 ${create.p50Ms} p99 ${create.p99Ms} cpu/req ${create.cpu.serverUsPerReq.toFixed(0)} us, event loop ${create.cpu.eventLoopUsPerReq.toFixed(0)} us`);
  console.log(`cpu/req by thread (us): ${Object.entries(create.cpu.threadsUsPerReq).sort((a, b) => b[1] - a[1]).map(([name, us]) => `${name} ${us.toFixed(0)}`).join(', ')}`);
  if (process.env.OPEN === '1') {
    // Then bench:http's open loop (BENCH_OPEN_CREATES creates/s + BENCH_OPEN_READS reads/s of the 2,000 checkpoints), and the memory under it.
    const open = await openLoopMeasured(baton, ids);
    console.log(`open loop: create p50 ${open.streams.create?.p50Ms} p99 ${open.streams.create?.p99Ms} ms, read p50 ${open.streams.read?.p50Ms} p99 ${open.streams.read?.p99Ms} ms, all p50 ${open.all.p50Ms} p99 ${open.all.p99Ms} ms, ${open.errors} errors, server ${open.cpu.serverPct.toFixed(0)} % of a core, ${open.cpu.serverUsPerReq.toFixed(0)} us/req, event loop ${open.cpu.eventLoopUsPerReq.toFixed(0)} us/req, generator ${open.cpu.generatorPct.toFixed(0)} %; by thread ${JSON.stringify(open.cpu.threadsUsPerReq)}; memory after ${JSON.stringify(memoryOf(baton.child.pid))}`);
  }
  await stopServers();
  if (sink !== undefined) console.log(`spans exported: ${sink.requests()} OTLP requests, ${sink.bytes()} bytes`);
  await sink?.close();
  if (process.env.PROFILE === '0') return;
  const file = readdirSync(out).filter((f) => f.endsWith('.cpuprofile')).sort((a, b) => statSync(join(out, a)).size - statSync(join(out, b)).size).pop()!;
  console.log(summarize(JSON.parse(readFileSync(join(out, file), 'utf8')) as Profile));
  console.log(`profile: ${join(out, file)}`);
}
main().catch((e) => { console.error(e); process.exitCode = 1; }).finally(() => setTimeout(() => process.exit(), 1000).unref());
