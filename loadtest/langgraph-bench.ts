/**
 * LangGraph checkpointer benchmark: BatonSaver over HTTP (a Baton server in
 * its own process, LMDB in a temp dir) beside LangGraph's SqliteSaver as
 * shipped (WAL, the library's default synchronous level) and with
 * `synchronous=FULL` (every commit fsynced, as Baton's are), in the same run
 * on the same machine. One caller, one operation at a time, as a graph
 * drives its checkpointer: put (a step's checkpoint, ~2 KB of state),
 * getTuple (a checkpoint by id) and list (100 checkpoints of a thread).
 *
 *   npm run bench:langgraph        (= npx tsx loadtest/langgraph-bench.ts)
 *
 * Environment: BENCH_OPS (operations per figure, default 500),
 * BENCH_LISTS (list(100) calls, default 50). Prints an aligned table and,
 * last, `RESULT {json}`. Nothing here asserts on time; it stops by itself.
 *
 * @module
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { BaseCheckpointSaver, Checkpoint } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { BatonClient } from '../src/client/index.js';
import { BatonSaver } from '../src/langgraph/index.js';
import { onInterrupt, TempDirs } from './lib/cleanup.js';
import { envNumber } from './lib/env.js';
import { BATON_MAIN, killServers, startServer, stopServers } from './lib/servers.js';
import { latencyOf, round } from './lib/stats.js';
import { alignedTable } from './lib/tables.js';

// At least 100, so that list(100) has a full thread to read.
const OPS = Math.max(100, envNumber('BENCH_OPS', 500, true));
const LISTS = envNumber('BENCH_LISTS', 50, true);
const TOKEN = 'langgraph-bench-token';

const tempDirs = new TempDirs('baton-lg-bench');
onInterrupt(async () => {
  killServers();
  tempDirs.removeAll();
});

interface Row {
  saver: string;
  op: string;
  p50Ms: number;
  p99Ms: number;
  opsPerSecond: number;
}

/** A step's checkpoint: a message list that grows and a few small channels, about 2 KB serialized. */
function checkpointAt(step: number, id: string): Checkpoint {
  const messages = Array.from({ length: 8 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `step ${step} message ${i} `.repeat(10) }));
  return {
    v: 4,
    id,
    ts: new Date().toISOString(),
    channel_values: { messages, step, plan: `plan at step ${step}` },
    channel_versions: { messages: step + 1, step: step + 1, plan: step + 1 },
    versions_seen: { agent: { messages: step } },
  };
}

/** Times `op` run `count` times one after another. */
async function timed(count: number, op: (i: number) => Promise<void>): Promise<{ p50Ms: number; p99Ms: number; opsPerSecond: number }> {
  const samples: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    await op(i);
    samples.push(performance.now() - t0);
  }
  const seconds = (performance.now() - started) / 1000;
  const { p50Ms, p99Ms } = latencyOf(samples);
  return { p50Ms, p99Ms, opsPerSecond: round(count / seconds, 1) };
}

async function bench(name: string, saver: BaseCheckpointSaver, ids: () => string): Promise<Row[]> {
  const thread = `bench-${name}`;
  const configs: { configurable: Record<string, string> }[] = [];
  let parent: { configurable: Record<string, string> } = { configurable: { thread_id: thread, checkpoint_ns: '' } };
  // A warm-up thread, so the first measured operations do not pay for JIT and connection set-up.
  for (let i = 0; i < 20; i += 1) await saver.put({ configurable: { thread_id: `${thread}-warm`, checkpoint_ns: '' } }, checkpointAt(i, ids()), { source: 'loop', step: i, parents: {} }, {});
  const put = await timed(OPS, async (i) => {
    const checkpoint = checkpointAt(i, ids());
    parent = (await saver.put(parent, checkpoint, { source: 'loop', step: i, parents: {} }, checkpoint.channel_versions)) as typeof parent;
    configs.push(parent);
  });
  const get = await timed(OPS, async (i) => {
    const tuple = await saver.getTuple(configs[(i * 7919) % configs.length]!);
    if (tuple === undefined) throw new Error('A checkpoint written by the benchmark could not be read back.');
  });
  const list = await timed(LISTS, async () => {
    let n = 0;
    for await (const _ of saver.list({ configurable: { thread_id: thread } }, { limit: 100 })) n += 1;
    if (n !== 100) throw new Error('list(100) did not answer 100 checkpoints.');
  });
  return [
    { saver: name, op: 'put', ...put },
    { saver: name, op: 'getTuple', ...get },
    { saver: name, op: 'list(100)', ...list },
  ];
}

async function sqlite(file: string, synchronous?: 'FULL'): Promise<{ saver: SqliteSaver; level: string }> {
  const saver = SqliteSaver.fromConnString(file);
  if (synchronous) saver.db.pragma(`synchronous=${synchronous}`);
  // The saver switches to WAL on first use, and the WAL default level may differ: read the level in force after that.
  await saver.getTuple({ configurable: { thread_id: 'none' } });
  const level = ['OFF', 'NORMAL', 'FULL', 'EXTRA'][saver.db.pragma('synchronous', { simple: true }) as number]!;
  return { saver, level };
}

async function main(): Promise<void> {
  const dataDir = tempDirs.make('baton');
  const server = await startServer('baton', BATON_MAIN, { BATON_DATA_DIR: dataDir, BATON_TOKENS: `writer:${TOKEN}`, LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1', BATON_RATE_LIMIT_PER_MINUTE: '1000000000' }, '/readyz');
  // uuid6-like ids: time-ordered strings, as LangGraph mints them, so `before` and order behave as in a graph.
  let counter = 0;
  const ids = () => `${Date.now().toString(16).padStart(12, '0')}-${(counter++).toString(16).padStart(12, '0')}`;
  const shipped = await sqlite(join(tempDirs.make('sqlite'), 'shipped.db'));
  const full = await sqlite(join(tempDirs.make('sqlite-full'), 'full.db'), 'FULL');
  console.log(`langgraph bench: ${OPS} puts and getTuples, ${LISTS} list(100) per saver, one at a time; node ${process.version}, ${cpus().length} CPUs`);
  const rows: Row[] = [];
  try {
    const baton = new BatonSaver({ client: new BatonClient({ baseUrl: server.url, token: TOKEN }), agentId: 'bench' });
    rows.push(...(await bench('BatonSaver (HTTP, LMDB)', baton, ids)));
    rows.push(...(await bench(`SqliteSaver (WAL, synchronous=${shipped.level}, as shipped)`, shipped.saver, ids)));
    rows.push(...(await bench(`SqliteSaver (WAL, synchronous=${full.level})`, full.saver, ids)));
  } finally {
    shipped.saver.db.close();
    full.saver.db.close();
    await stopServers();
    tempDirs.removeAll();
  }
  console.log(alignedTable(['saver', 'operation', 'p50 ms', 'p99 ms', 'ops/s'], rows.map((r) => [r.saver, r.op, String(r.p50Ms), String(r.p99Ms), String(r.opsPerSecond)]), 2));
  console.log(`RESULT ${JSON.stringify(rows)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  killServers();
  tempDirs.removeAll();
  process.exitCode = 1;
});
