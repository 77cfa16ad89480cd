/**
 * One measured store, empty or loaded: what it holds and takes on disk (read
 * before the server opens it), then the real server started on it as a child
 * process and measured over HTTP: the reads one at a time, then the create
 * closed loop last, so that its writes do not change the store the reads saw.
 *
 * @module
 */
import { OPEN_TASKS, RATE_LIMIT, TOKEN } from './http-config.js';
import { taskId } from './http-payloads.js';
import { closedLoop, postRequests, type ClosedFigures } from './http-scenarios.js';
import { memoryOf, type Memory } from './proc.js';
import { lmdbDisk, type Disk } from './scale-disk.js';
import { readScenarios, scaleTaskId, type StoreShape } from './scale-data.js';
import { countCheckpoints } from './scale-load.js';
import { CanonicalSizes, measureReads, type ReadFigures } from './scale-reads.js';
import { BATON_MAIN, startServer, stopServers } from './servers.js';
import { round } from './stats.js';

export interface PhaseFigures {
  dataDir: string;
  /** Checkpoints the store held when measured (the load's, and creates of earlier runs on a reused directory). */
  checkpoints: number;
  tasks: number;
  disk: Disk;
  diskPerCheckpoint: { allocatedBytes: number; apparentBytes: number };
  /** Mean canonical JSON size of the first checkpoint of each history page read. */
  canonicalBytes: number;
  canonicalSamples: number;
  /** From spawning the server to its first answer on /readyz. */
  startSeconds: number;
  reads: Record<string, ReadFigures>;
  create: ClosedFigures;
  memory: Memory | undefined;
  /** Warning and error lines the server logged (LOG_LEVEL=warn), the first few kept. */
  warnings: number;
  firstWarnings: string[];
}

function batonEnv(dataDir: string): Record<string, string> {
  return {
    BATON_DATA_DIR: dataDir,
    BATON_TOKENS: `writer:${TOKEN}`,
    BATON_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    LOG_LEVEL: 'warn',
    PORT: '0',
    HOST: '127.0.0.1',
  };
}

/** Measures the store in `dataDir`, whose loaded part has `shape`; `step` announces each run. */
export async function measurePhase(label: string, dataDir: string, shape: StoreShape, step: (line: string) => void): Promise<PhaseFigures> {
  const disk = lmdbDisk(dataDir);
  // The create scenario writes to the HTTP benchmark's tasks: a reused directory holds those of earlier runs too.
  const taskIds = [...Array.from({ length: shape.tasks }, (_, t) => scaleTaskId(t)), ...Array.from({ length: OPEN_TASKS }, (_, i) => taskId(i))];
  const checkpoints = await countCheckpoints(dataDir, taskIds);

  const spawned = performance.now();
  const server = await startServer(`baton (${label})`, BATON_MAIN, batonEnv(dataDir), '/readyz');
  const startSeconds = round((performance.now() - spawned) / 1000, 2);
  step(`${label}: baton pid ${server.child.pid} at ${server.url} on ${dataDir} (${checkpoints.toLocaleString('en')} checkpoints), started in ${startSeconds} s`);

  const reads: Record<string, ReadFigures> = {};
  const canonical = new CanonicalSizes();
  for (const scenario of readScenarios(shape)) {
    step(`${label}: ${scenario.name}`);
    reads[scenario.key] = await measureReads(server, scenario, scenario.kind === 'history' ? canonical.addPage : undefined);
  }
  step(`${label}: create (closed loop)`);
  const create = await closedLoop(server, postRequests);
  const memory = memoryOf(server.child.pid);
  const warnings = server.lines.slice();
  await stopServers();

  return {
    dataDir,
    checkpoints,
    tasks: shape.tasks,
    disk,
    diskPerCheckpoint: { allocatedBytes: round(disk.allocatedBytes / checkpoints, 0), apparentBytes: round(disk.apparentBytes / checkpoints, 0) },
    canonicalBytes: canonical.mean,
    canonicalSamples: canonical.samples,
    startSeconds,
    reads,
    create,
    memory,
    warnings: warnings.length,
    firstWarnings: warnings.slice(0, 5).map((line) => line.slice(0, 400)),
  };
}
