/**
 * A client's Idempotency-Key retried while its first write waits in the
 * queue (a client that gave up before the 202, as the partition scenarios'
 * clients do, and sent it again through the same instance): the retry gets
 * the first 202, with the ids it promised, and nothing is queued twice —
 * whether the first is queued, still on its way to disk, or read back from
 * the journal after a restart. Another request under the key is refused;
 * once the first is applied, the key is the store's to answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { CreateCheckpoint, UpdateCheckpoint } from '../../src/domain/commands.js';
import { WriteQueue } from '../../src/queue/write-queue.js';
import { checkpointBody } from '../support/app.js';

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'baton-retried-key-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const AT = '2026-11-23T10:00:00.000Z';
const actor = { tenant: 'default', role: 'writer', subject: 'writer' } as const;

/** A create sent under `key`; each attempt of a request mints its own checkpoint id, as the route does. */
function create(key: string, attempt: number, fingerprint = 'request-1'): CreateCheckpoint {
  return {
    kind: 'checkpoint.create',
    operationId: `key:${key}`,
    idempotency: 'client',
    fingerprint,
    actor,
    at: AT,
    taskId: 'retried-task',
    checkpointId: `00000000-0000-7000-8000-${String(attempt).padStart(12, '0')}`,
    input: checkpointInput.parse(checkpointBody('retried-task')),
  };
}

async function open(d: string): Promise<WriteQueue> {
  return (await WriteQueue.open({ dir: d, maxBytes: 64 * 1024 * 1024 })).queue;
}

it('answers a key retried while its write is queued with the first 202, and queues it once', async () => {
  const queue = await open(dir());
  const first = await queue.enqueue(create('k1', 1), 'retried-task', AT);
  const again = await queue.enqueue(create('k1', 2), 'retried-task', AT);
  expect(again).toEqual(first);
  expect(again.checkpointId).toBe(create('k1', 1).checkpointId);
  expect(queue.depth).toBe(1);
  await queue.close();
});

it('answers a retry sent while the first is on its way to disk with the first 202', async () => {
  const queue = await open(dir());
  const [first, again] = await Promise.all([queue.enqueue(create('k2', 1), 'retried-task', AT), queue.enqueue(create('k2', 2), 'retried-task', AT)]);
  expect(again).toEqual(first);
  expect(queue.depth).toBe(1);
  await queue.close();
});

it('answers a retry after a restart with the first 202, worked out from the journal', async () => {
  const d = dir();
  const before = await open(d);
  await before.enqueue(create('other', 9), 'retried-task', AT);
  const first = await before.enqueue(create('k3', 1), 'retried-task', AT);
  const change: UpdateCheckpoint = {
    kind: 'checkpoint.update',
    operationId: 'key:k4',
    idempotency: 'client',
    fingerprint: 'request-4',
    actor,
    at: AT,
    checkpointId: first.checkpointId,
    ifMatch: 1,
    patch: { labels: { step: 2 } },
  };
  const changed = await before.enqueue(change, 'retried-task', AT);
  await before.close();

  const after = await open(d);
  expect(await after.enqueue(create('k3', 2), 'retried-task', AT)).toEqual(first);
  expect(await after.enqueue(change, 'retried-task', AT)).toEqual(changed);
  expect(after.depth).toBe(3);
  await after.close();
});

it('refuses another request under a queued key, and leaves the key to the store once the write is applied', async () => {
  const queue = await open(dir());
  await queue.enqueue(create('k5', 1), 'retried-task', AT);
  await expect(queue.enqueue(create('k5', 2, 'request-2'), 'retried-task', AT)).rejects.toMatchObject({ code: 'idempotency_key_reused' });
  expect(queue.depth).toBe(1);
  expect(queue.replayed('default', 'key:k5')).toBe(false);
  queue.done(1);
  // Applied: `submit` sends a retry to the store, which answers it from the key's record, instead of queueing it behind the task's writes.
  expect(queue.replayed('default', 'key:k5')).toBe(true);
  expect(queue.replayed('other-tenant', 'key:k5')).toBe(false);
  await queue.close();
});
