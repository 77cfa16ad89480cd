/**
 * Growth benchmark: does the service stay flat as the store grows? The same
 * figures, over HTTP against the real server (a child process, as in
 * `http-bench.ts`), on an almost empty store and on one loaded with a million
 * checkpoints.
 *
 *   npm run bench:scale            (= npx tsx loadtest/scale-bench.ts)
 *
 * 1. Empty store: a fresh directory seeded in this process with 1,200
 *    checkpoints over 10 tasks (enough for history pages of 100), measured.
 * 2. Load: a second fresh directory gets BENCH_SCALE_CHECKPOINTS checkpoints
 *    over BENCH_SCALE_TASKS tasks, in this process through the service layer
 *    (`createCheckpoint` with the command the create route builds), 256 in
 *    flight so that LMDB commits them in groups; progress on stderr.
 * 3. Loaded store: measured like the empty one.
 *
 * Measured on each store (`lib/scale-phase.ts`), reads one at a time over one
 * connection, BENCH_SCALE_READS requests each after 20 discarded, each to
 * another task or value (`lib/scale-data.ts` says what the bodies hold):
 *   history(100)  GET /v1/tasks/:taskId/checkpoints?limit=100
 *   latest        GET /v1/tasks/:taskId/checkpoints/latest
 *   search        GET /v1/checkpoints?...&limit=20 by agentId, label.NAME, file
 *                 and q, each with a common and a rare value
 *   create        POST /v1/checkpoints, autocannon closed loop at BENCH_CONNECTIONS
 *                 (default 100) for BENCH_SECONDS after a warm-up, last, so its
 *                 writes do not change what the reads saw
 *   disk          LMDB's data.mdb (allocated blocks and apparent size) over the
 *                 checkpoints held, read before the server starts, beside the mean
 *                 canonical JSON size of the checkpoints answered by history pages
 *
 * Environment:
 *   BENCH_SCALE_CHECKPOINTS  checkpoints to load (default 1000000)
 *   BENCH_SCALE_TASKS        tasks they are spread over (default 10000; ~100 each)
 *   BENCH_SCALE_READS        measured requests per read figure (default 400)
 *   BENCH_SECONDS            measured seconds of the create closed loop (default 8)
 *   BENCH_WARMUP_SECONDS     its discarded warm-up (default min(2, BENCH_SECONDS / 4))
 *   BENCH_CONNECTIONS        its autocannon connections (default 100)
 *   BENCH_SCALE_KEEP_DIR     set (e.g. 1): keep the loaded directory and print its path
 *   BENCH_SCALE_DATA_DIR     a directory kept by an earlier run: skip the load and
 *                            measure it (BENCH_SCALE_CHECKPOINTS and _TASKS are then
 *                            read from its scale-bench.json); it is never removed
 *
 * Prints one aligned table (empty store, loaded store, their ratio, the
 * targets with a verdict) and, last, one line `RESULT {json}` with every
 * figure. Nothing here asserts on time. Servers are stopped and temp dirs
 * removed at the end, on error and on SIGINT/SIGTERM.
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { onInterrupt, runMain, TempDirs } from './lib/cleanup.js';
import { CONNECTIONS, SECONDS, WARMUP_SECONDS } from './lib/http-config.js';
import { KEEP_DIR, READS, REUSE_DIR, SCALE_CHECKPOINTS, SCALE_TASKS, SEARCH_LIMIT, SEED_CHECKPOINTS, SEED_TASKS, TARGETS } from './lib/scale-config.js';
import { scaleBody, type StoreShape } from './lib/scale-data.js';
import { loadStore, readManifest, writeManifest, type LoadFigures } from './lib/scale-load.js';
import { measurePhase } from './lib/scale-phase.js';
import { diskOverCanonical, scaleTable, verdictsOf } from './lib/scale-report.js';
import { killServers, stopServers } from './lib/servers.js';
import { round } from './lib/stats.js';

const tempDirs = new TempDirs('baton-scale-bench');
/** A directory loaded to be kept (BENCH_SCALE_KEEP_DIR): outside `tempDirs`, removed only if its load did not finish. */
let keptDir: string | undefined;
let keptDirComplete = false;

function removeDirs(): void {
  tempDirs.removeAll();
  if (keptDir !== undefined && !keptDirComplete) rmSync(keptDir, { recursive: true, force: true });
}

async function cleanup(): Promise<void> {
  await stopServers();
  removeDirs();
}

onInterrupt(cleanup, (signal) => console.error(`\n${signal}: stopping the server and removing temp dirs`));
process.on('exit', () => {
  killServers();
  removeDirs();
});

const step = (line: string): void => {
  process.stderr.write(`  ${line}\n`);
};

/** The loaded directory and its shape: reused, or loaded now. */
async function loadedStore(): Promise<{ dir: string; shape: StoreShape; load: LoadFigures | undefined }> {
  if (REUSE_DIR !== undefined) {
    const manifest = readManifest(REUSE_DIR);
    console.log(`loaded store: reusing ${REUSE_DIR} (${manifest.checkpoints} checkpoints over ${manifest.tasks} tasks, loaded ${manifest.loadedAt})`);
    return { dir: REUSE_DIR, shape: { tasks: manifest.tasks, checkpoints: manifest.checkpoints }, load: undefined };
  }
  const shape = { tasks: SCALE_TASKS, checkpoints: SCALE_CHECKPOINTS };
  let dir: string;
  if (KEEP_DIR) {
    dir = mkdtempSync(join(tmpdir(), 'baton-scale-bench-kept-'));
    keptDir = dir;
  } else {
    dir = tempDirs.make('loaded');
  }
  step(`loading ${shape.checkpoints.toLocaleString('en')} checkpoints over ${shape.tasks.toLocaleString('en')} tasks into ${dir} (in process, service layer)`);
  const load = await loadStore(dir, shape, step);
  writeManifest(dir, load);
  keptDirComplete = true;
  console.log(`load: ${load.checkpoints} checkpoints over ${load.tasks} tasks in ${load.seconds} s, ${load.perSec}/s`);
  return { dir, shape, load };
}

async function main(): Promise<void> {
  if (REUSE_DIR === undefined && SCALE_CHECKPOINTS / SCALE_TASKS < 100) {
    console.warn(`warning: ${SCALE_CHECKPOINTS} checkpoints over ${SCALE_TASKS} tasks is under 100 a task: history(100) pages will be short`);
  }
  console.log(
    `scale bench: ${READS} reads per figure one at a time, search limit ${SEARCH_LIMIT}; create ${SECONDS} s after ${WARMUP_SECONDS} s warm-up at ${CONNECTIONS} connections; ` +
      `body ~${Buffer.byteLength(scaleBody(0, SCALE_TASKS))} B; node ${process.version}, ${cpus().length} CPUs`,
  );

  const emptyShape = { tasks: SEED_TASKS, checkpoints: SEED_CHECKPOINTS };
  const emptyDir = tempDirs.make('empty');
  step(`empty store: seeding ${SEED_CHECKPOINTS} checkpoints over ${SEED_TASKS} tasks`);
  await loadStore(emptyDir, emptyShape);
  const empty = await measurePhase('empty store', emptyDir, emptyShape, step);

  const { dir, shape, load } = await loadedStore();
  const loaded = await measurePhase('loaded store', dir, shape, step);

  const verdicts = verdictsOf(empty, loaded, shape);
  console.log('');
  console.log(scaleTable(empty, loaded, shape));
  for (const [label, phase] of [['empty', empty], ['loaded', loaded]] as const) {
    if (phase.warnings === 0) continue;
    console.log(`baton (${label} store) logged ${phase.warnings} warning/error line(s); first ones:`);
    for (const line of phase.firstWarnings) console.log(`  ${line}`);
  }
  if (keptDir !== undefined) console.log(`kept the loaded directory: BENCH_SCALE_DATA_DIR=${keptDir}`);

  const result = {
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    connections: CONNECTIONS,
    reads: READS,
    searchLimit: SEARCH_LIMIT,
    node: process.version,
    cpus: cpus().length,
    tmpdir: tmpdir(),
    load: load ?? { reused: dir },
    empty,
    loaded,
    ratios: {
      createRate: round(loaded.create.okPerSec / empty.create.okPerSec, 4),
      historyP50: round(loaded.reads.history!.p50Ms / empty.reads.history!.p50Ms, 4),
      diskOverCanonical: round(diskOverCanonical(loaded), 4),
    },
    targets: TARGETS,
    verdicts,
    keptDir,
  };
  await cleanup();
  console.log(`RESULT ${JSON.stringify(result)}`);
}

runMain(main, cleanup);
