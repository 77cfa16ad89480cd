/**
 * A live create's `createdAt` rises strictly along a task (`placeNewest`,
 * `checkpoint-writes.ts`): creates stamped in the same millisecond, or
 * earlier than the task's newest (a clock stepped back, or another
 * instance's clock behind), are placed one millisecond after it, hash and
 * all, so a task's history by creation time is its write order and full-text
 * runs follow it. A task head written before the head kept `latestAt` finds
 * the newest checkpoint's time in its record. A create the write queue
 * replays keeps the time its 202 promised instead (`placeAccepted`):
 * accepted in one millisecond, its id orders it.
 */
import { expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { CreateCheckpoint } from '../../src/domain/commands.js';
import { execute } from '../../src/service/execute.js';
import { Repository } from '../../src/service/repository/repository.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { auth, checkpointBody, useTestApp, type TestApp } from '../support/app.js';

const app = useTestApp();

function createCommand(taskId: string, checkpointId: string, at: string, words: string, fromQueue = false): CreateCheckpoint {
  return {
    kind: 'checkpoint.create',
    operationId: `op:${checkpointId}`,
    fingerprint: 'f',
    actor: { tenant: 'default', role: 'writer', subject: 'writer' },
    at,
    ...(fromQueue ? { fromQueue } : {}),
    taskId,
    checkpointId,
    input: checkpointInput.parse(checkpointBody(taskId, { executionState: { phase: 'implementing', completedItems: [words] } })),
  };
}

async function history(t: TestApp, taskId: string): Promise<{ id: string; createdAt: string }[]> {
  const res = await t.app.inject({ method: 'GET', url: `/v1/tasks/${taskId}/checkpoints`, headers: auth('auditor') });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { items: { id: string; createdAt: string }[] }).items;
}

const id = (n: number) => `01900000-0000-7000-8000-00000000000${n}`;

it('places creates of one millisecond, or of an earlier one, a millisecond after the task newest, and they verify', async () => {
  const t = app();
  const ctx = standaloneContext(t.store);
  const at = '2026-11-26T10:00:00.000Z';
  await execute(ctx, createCommand('same-ms', id(1), at, 'first osprey'));
  const second = await execute(ctx, createCommand('same-ms', id(2), at, 'second osprey'));
  const third = await execute(ctx, createCommand('same-ms', id(3), '2026-11-26T09:59:59.000Z', 'third osprey'));
  expect(second.doc.checkpoint.createdAt).toBe('2026-11-26T10:00:00.001Z');
  expect(third.doc.checkpoint.createdAt).toBe('2026-11-26T10:00:00.002Z');
  expect(await history(t, 'same-ms')).toMatchObject([
    { id: id(3), createdAt: '2026-11-26T10:00:00.002Z' },
    { id: id(2), createdAt: '2026-11-26T10:00:00.001Z' },
    { id: id(1), createdAt: at },
  ]);
  // Each one reads back verified (its hash covers the time it was placed at), and search finds them newest first.
  for (const n of [1, 2, 3]) expect((await t.app.inject({ method: 'GET', url: `/v1/checkpoints/${id(n)}`, headers: auth('auditor') })).statusCode).toBe(200);
  const found = await t.app.inject({ method: 'GET', url: '/v1/checkpoints?q=osprey', headers: auth('auditor') });
  expect((found.json() as { items: { id: string }[] }).items.map((c) => c.id)).toEqual([id(3), id(2), id(1)]);
});

it('finds the newest time in the record when the task head has no latestAt (written by an earlier release)', async () => {
  const t = app();
  const ctx = standaloneContext(t.store);
  await execute(ctx, createCommand('old-head', id(4), '2026-11-26T10:00:00.000Z', 'first heron'));
  await t.store.transact(async (tx) => {
    const repo = new Repository(tx, 'default');
    const head = (await repo.tasks.head('old-head'))!;
    delete head.latestAt;
    await repo.tasks.putHead(head);
  });
  const next = await execute(ctx, createCommand('old-head', id(5), '2026-11-26T09:00:00.000Z', 'second heron'));
  expect(next.doc.checkpoint.createdAt).toBe('2026-11-26T10:00:00.001Z');
  const found = await t.app.inject({ method: 'GET', url: '/v1/checkpoints?q=heron', headers: auth('auditor') });
  expect((found.json() as { items: { id: string }[] }).items.map((c) => c.id)).toEqual([id(5), id(4)]);
});

it('keeps the promised time of queued creates accepted in one millisecond, ordered by their ids, and finds both', async () => {
  const t = app();
  const ctx = standaloneContext(t.store);
  const at = '2026-11-26T11:00:00.000Z';
  await execute(ctx, createCommand('queued-ms', id(6), at, 'first plover', true));
  const second = await execute(ctx, createCommand('queued-ms', id(7), at, 'second plover', true));
  expect(second.doc.checkpoint.createdAt).toBe(at);
  expect(await history(t, 'queued-ms')).toMatchObject([{ id: id(7), createdAt: at }, { id: id(6), createdAt: at }]);
  const latest = await t.app.inject({ method: 'GET', url: '/v1/tasks/queued-ms/checkpoints/latest', headers: auth('auditor') });
  expect((latest.json() as { id: string }).id).toBe(id(7));
  const found = await t.app.inject({ method: 'GET', url: '/v1/checkpoints?q=plover', headers: auth('auditor') });
  expect((found.json() as { items: { id: string }[] }).items.map((c) => c.id)).toEqual([id(7), id(6)]);
});
