/**
 * Loading a store in this process, through the service layer and not HTTP:
 * an `LmdbStore`, a `ServiceContext` from `standaloneContext` (the one the
 * service tests use) with an indexer (`service/indexer/`), and `createCheckpoint` with the same `CreateCheckpoint` command
 * the create route builds (body validated by the route's own schema). About
 * LOAD_IN_FLIGHT creates are kept in flight, so LMDB's group commit takes
 * many writes per fsync, as it does under a busy server. Also counting the
 * checkpoints a directory holds, and the manifest a loaded directory keeps.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { Actor, CreateCheckpoint } from '../../src/domain/commands.js';
import { newId } from '../../src/domain/ids.js';
import { createCheckpoint } from '../../src/service/checkpoint-writes.js';
import { snapshot, type ServiceContext } from '../../src/service/context.js';
import { Indexer } from '../../src/service/indexer/indexer.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { LOAD_IN_FLIGHT, PROGRESS_EVERY } from './scale-config.js';
import { scaleBody, type StoreShape } from './scale-data.js';
import { round } from './stats.js';

/** The writer the HTTP benchmark's token stands for; the in-process load writes as the same tenant. */
const WRITER: Actor = { tenant: 'default', role: 'writer', subject: 'writer' };

/** The command POST /v1/checkpoints builds from `body` (no Idempotency-Key, so no fingerprint). */
export function createCommand(ctx: ServiceContext, body: string): CreateCheckpoint {
  const input = checkpointInput.parse(JSON.parse(body));
  return {
    operationId: `op:${randomUUID()}`,
    fingerprint: '',
    actor: WRITER,
    at: ctx.now().toISOString(),
    kind: 'checkpoint.create',
    taskId: input.taskId,
    checkpointId: newId(),
    input,
  };
}

export interface LoadFigures {
  checkpoints: number;
  tasks: number;
  seconds: number;
  perSec: number;
}

/** Writes `shape.checkpoints` checkpoints over `shape.tasks` tasks into the LMDB directory `dir`; `progress` every PROGRESS_EVERY. */
export async function loadStore(dir: string, shape: StoreShape, progress?: (line: string) => void): Promise<LoadFigures> {
  const store = LmdbStore.open({ path: dir });
  const ctx = standaloneContext(store);
  // The indexer merges the full-text pending list as the load goes, as a server's does (and holds creates back when it falls behind).
  const indexer = new Indexer(ctx, 20);
  ctx.indexer = indexer;
  indexer.start();
  const started = performance.now();
  const seconds = (): number => (performance.now() - started) / 1000;
  let next = 0;
  let done = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    for (let n = next++; n < shape.checkpoints && !failed; n = next++) {
      try {
        await createCheckpoint(ctx, createCommand(ctx, scaleBody(n, shape.tasks)));
      } catch (error) {
        failed = true;
        throw error;
      }
      done += 1;
      if (done % PROGRESS_EVERY === 0) {
        progress?.(`  loaded ${done.toLocaleString('en')}/${shape.checkpoints.toLocaleString('en')} checkpoints, ${Math.round(done / seconds())}/s, ${seconds().toFixed(1)} s`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(LOAD_IN_FLIGHT, shape.checkpoints) }, worker));
    // What is left pending is merged before the directory is reused: the reads measure the index as a caught-up indexer leaves it.
    await indexer.settle();
  } finally {
    await indexer.stop();
    await store.close();
  }
  return { checkpoints: done, tasks: shape.tasks, seconds: round(seconds(), 2), perSec: round(done / seconds(), 0) };
}

/** Task heads read per snapshot when counting. */
const HEADS_PER_SNAPSHOT = 500;

/**
 * The checkpoints `dir` holds in `taskIds`: the sum of their heads' sequences
 * (one per checkpoint created; nothing here purges). Read before the server
 * opens the directory.
 */
export async function countCheckpoints(dir: string, taskIds: string[]): Promise<number> {
  const store = LmdbStore.open({ path: dir });
  const ctx = standaloneContext(store);
  let total = 0;
  try {
    for (let i = 0; i < taskIds.length; i += HEADS_PER_SNAPSHOT) {
      const batch = taskIds.slice(i, i + HEADS_PER_SNAPSHOT);
      total += await snapshot(ctx, WRITER.tenant, async (repo) => {
        let sum = 0;
        for (const id of batch) sum += (await repo.tasks.head(id))?.seq ?? 0;
        return sum;
      });
    }
  } finally {
    await store.close();
  }
  return total;
}

/** Written into a loaded directory once its load is complete: what a later run with BENCH_SCALE_DATA_DIR reuses. */
const MANIFEST = 'scale-bench.json';

export interface Manifest extends StoreShape {
  loadedAt: string;
  load: LoadFigures;
}

export function writeManifest(dir: string, load: LoadFigures): void {
  const manifest: Manifest = { tasks: load.tasks, checkpoints: load.checkpoints, loadedAt: new Date().toISOString(), load };
  writeFileSync(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

export function readManifest(dir: string): Manifest {
  const path = join(dir, MANIFEST);
  if (!existsSync(path)) throw new Error(`${dir} has no ${MANIFEST}: it was not loaded (completely) by this benchmark; load one with BENCH_SCALE_KEEP_DIR=1.`);
  return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
}
