/**
 * The service layer's share of a create, without HTTP: the same commands the
 * create route builds (bodies parsed and validated beforehand, outside the
 * measurement), applied through `execute` on a real LMDB store in a temp dir,
 * BENCH_SERVICE_IN_FLIGHT at once so that LMDB groups commits as under load.
 * Prints creates/s and the main thread's CPU per create, the figure
 * `docs/performance.md` sets beside the HTTP benchmark's event-loop column.
 *
 *   npx tsx loadtest/service-bench.ts
 *
 * Environment: BENCH_SERVICE_CREATES (default 20000), BENCH_SERVICE_IN_FLIGHT
 * (default 100). Run it with the service's young generation
 * (`NODE_OPTIONS=--max-semi-space-size=32`) to compare with `npm start`
 * (Node refuses its other V8 flag, `--incremental-marking-soft-trigger`, in
 * `NODE_OPTIONS`).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { execute } from '../src/service/execute.js';
import { LmdbStore } from '../src/store/lmdb.js';
import { onInterrupt, TempDirs } from './lib/cleanup.js';
import { envNumber } from './lib/env.js';
import { checkpointBody, taskId } from './lib/http-payloads.js';
import { standaloneContext } from '../src/service/standalone.js';
import { createCommand } from './lib/scale-load.js';

const CREATES = envNumber('BENCH_SERVICE_CREATES', 20_000, true);
const IN_FLIGHT = envNumber('BENCH_SERVICE_IN_FLIGHT', 100, true);

const tempDirs = new TempDirs('baton-service-bench');
onInterrupt(async () => tempDirs.removeAll(), () => undefined);

/** CPU seconds of this process's main thread. */
function mainThreadSeconds(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function run(store: LmdbStore, count: number): Promise<{ perSec: number; mainUs: number }> {
  const ctx = standaloneContext(store);
  const commands = Array.from({ length: count }, (_, i) => createCommand(ctx, checkpointBody(taskId(i), i)));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < commands.length) await execute(ctx, commands[next++]!);
  };
  const cpu0 = mainThreadSeconds();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = (performance.now() - t0) / 1000;
  return { perSec: count / seconds, mainUs: ((mainThreadSeconds() - cpu0) * 1e6) / count };
}

async function main(): Promise<void> {
  const store = LmdbStore.open({ path: tempDirs.make('data') });
  try {
    await run(store, Math.min(5_000, CREATES)); // warm-up: every task exists, the code is optimized
    const { perSec, mainUs } = await run(store, CREATES);
    console.log(`service layer: ${CREATES} creates, ${IN_FLIGHT} in flight: ${perSec.toFixed(0)}/s, main thread ${mainUs.toFixed(0)} us per create`);
  } finally {
    await store.close();
    tempDirs.removeAll();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
