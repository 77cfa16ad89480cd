/**
 * Filling a data directory through the service layer in this process, not
 * over HTTP: the same create command the route builds, many in flight so
 * LMDB's group commit takes many writes per fsync. For tests that need a
 * task far larger than a request loop could write in time (a purge of
 * 100,000 checkpoints); the server is started on the directory afterwards.
 */
import { randomUUID } from 'node:crypto';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import { newId } from '../../src/domain/ids.js';
import { createCheckpoint } from '../../src/service/checkpoint-writes.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { LmdbStore } from '../../src/store/lmdb.js';

const IN_FLIGHT = 64;

/** Writes `count` checkpoints of `body(n)` into task `taskId` of the default tenant in `dir`. */
export async function loadTask(dir: string, taskId: string, count: number, body: (n: number) => Record<string, unknown>): Promise<void> {
  const store = LmdbStore.open({ path: dir });
  const ctx = standaloneContext(store);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let n = next++; n < count; n = next++) {
      const input = checkpointInput.parse({ ...body(n), taskId });
      await createCheckpoint(ctx, {
        operationId: `op:${randomUUID()}`,
        fingerprint: '',
        actor: { tenant: 'default', role: 'writer', subject: 'writer' },
        at: ctx.now().toISOString(),
        kind: 'checkpoint.create',
        taskId,
        checkpointId: newId(),
        input,
      });
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count) }, worker));
  } finally {
    await store.close();
  }
}
