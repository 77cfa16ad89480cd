/**
 * A journal replayed after its operation records expired (DESIGN §10): an
 * instance that comes back more than `BATON_OPERATION_RETENTION_MS` after
 * it accepted a write can no longer tell whether that write applied before
 * it went down (the record that said so is gone), so such a write goes to
 * the dead-letter list with its reason instead of being applied a second
 * time. A create is the exception (its id and hash tell a repeat apart), and
 * a write younger than the retention applies as ever.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { CreateCheckpoint, UpdateCheckpoint } from '../../src/domain/commands.js';
import { startReplayer } from '../../src/queue/replayer.js';
import { WriteQueue } from '../../src/queue/write-queue.js';
import { snapshot } from '../../src/service/context.js';
import { listDeadLetters } from '../../src/service/dead-letters.js';
import { execute } from '../../src/service/execute.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { checkpointBody } from '../support/app.js';

const HOUR = 60 * 60 * 1000;
const T0 = Date.parse('2026-11-27T08:00:00.000Z');
const writer = { tenant: 'default', role: 'writer', subject: 'writer' } as const;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

const id = (n: number) => `01900000-0000-7000-8000-0000000001${String(n).padStart(2, '0')}`;

function create(taskId: string, checkpointId: string, at: number): CreateCheckpoint {
  return { kind: 'checkpoint.create', operationId: `op:create:${checkpointId}`, fingerprint: 'f', actor: writer, at: new Date(at).toISOString(), taskId, checkpointId, input: checkpointInput.parse(checkpointBody(taskId)) };
}

function update(checkpointId: string, at: number, step: number): UpdateCheckpoint {
  return { kind: 'checkpoint.update', operationId: `op:update:${checkpointId}:${step}`, fingerprint: 'f', actor: writer, at: new Date(at).toISOString(), checkpointId, patch: { labels: { step } }, ifMatch: 1 };
}

it('dead-letters an update that waited past the operation retention, and still applies a create and a younger update', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-orphaned-'));
  const store = LmdbStore.open({ path: join(dir, 'data') });
  const { queue } = await WriteQueue.open({ dir: join(dir, 'queue'), maxBytes: 1024 * 1024 });
  const now = T0 + 25 * HOUR;
  const ctx = standaloneContext(store, { queue, now: () => new Date(now) });
  const direct = standaloneContext(store, { now: () => new Date(T0) });
  await execute(direct, create('orphaned', id(1), T0));
  await execute(direct, create('fresh', id(2), T0));

  // Accepted a day and an hour ago, while the store was down: an update, and a create of a new checkpoint.
  await queue.enqueue(update(id(1), T0, 2), 'orphaned', new Date(T0).toISOString());
  await queue.enqueue(create('late-create', id(3), T0), 'late-create', new Date(T0).toISOString());
  // Accepted an hour ago.
  await queue.enqueue(update(id(2), now - HOUR, 2), 'fresh', new Date(now - HOUR).toISOString());

  const replayer = startReplayer(ctx, queue, { intervalMs: 60_000 });
  cleanup = async () => {
    await replayer.stop();
    await queue.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  await replayer.kick();
  expect(queue.depth).toBe(0);

  const versions = await snapshot(ctx, 'default', async (repo) =>
    Promise.all([id(1), id(2), id(3)].map(async (checkpointId, i) => {
      const loaded = await repo.checkpoints.current(['orphaned', 'fresh', 'late-create'][i]!, checkpointId);
      return loaded?.ok ? loaded.doc.version : undefined;
    })),
  );
  expect(versions).toEqual([1, 2, 1]);
  const letters = (await listDeadLetters(ctx, { ...writer, role: 'admin' }, 100)).items;
  expect(letters).toHaveLength(1);
  expect(letters[0]).toMatchObject({ checkpointId: id(1), taskId: 'orphaned', error: { code: 'queued_write_outlived', status: 410 } });
  expect(letters[0]!.error.detail).toContain('2026-11-27T08:00:00.000Z');
});
