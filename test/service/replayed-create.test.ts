/**
 * A create applied a second time after its operation record expired — a
 * queued write replayed after the record's retention, the way a drifting
 * applied count once made possible — finds its checkpoint already there
 * and changes nothing: one checkpoint, one history entry, one audit entry,
 * one event, the task head as it was. A create whose id is taken by other
 * content is refused, never written over it.
 */
import { expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { CreateCheckpoint } from '../../src/domain/commands.js';
import { AppError } from '../../src/errors.js';
import { execute } from '../../src/service/execute.js';
import { sweepOperations } from '../../src/service/operation-sweeper.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { auth, checkpointBody, useTestApp, type TestApp } from '../support/app.js';

const DAY = 24 * 60 * 60 * 1000;
const app = useTestApp();

function createCommand(taskId: string, checkpointId: string, extra: Record<string, unknown> = {}, operationId = `op:${checkpointId}`): CreateCheckpoint {
  return {
    kind: 'checkpoint.create',
    operationId,
    fingerprint: 'f',
    actor: { tenant: 'default', role: 'writer', subject: 'writer' },
    at: '2026-11-23T10:00:00.000Z',
    fromQueue: true,
    taskId,
    checkpointId,
    input: checkpointInput.parse(checkpointBody(taskId, extra)),
  };
}

async function get(t: TestApp, url: string): Promise<Record<string, unknown>> {
  const res = await t.app.inject({ method: 'GET', url, headers: auth('admin') });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Record<string, unknown>;
}

/** What a reader of the task sees: its head, history, audit chain and events. */
async function taskView(t: TestApp, taskId: string) {
  const [task, history, audit, verify, events] = await Promise.all([
    get(t, `/v1/tasks/${taskId}`),
    get(t, `/v1/tasks/${taskId}/checkpoints`),
    get(t, `/v1/tasks/${taskId}/audit`),
    get(t, `/v1/tasks/${taskId}/audit/verify`),
    get(t, '/v1/events?limit=1000'),
  ]);
  return {
    task,
    history: (history.items as { id: string; version: number }[]).map((c) => `${c.id}@${c.version}`),
    audit: (audit.items as { action: string }[]).map((e) => e.action),
    verify,
    events: (events.items as { type: string; data: { taskId: string } }[]).filter((e) => e.data.taskId === taskId).map((e) => e.type),
  };
}

it('applies a replayed create once when its operation record has expired, leaving head, history and audit as they were', async () => {
  const t = app();
  const ctx = standaloneContext(t.store);
  const id = '01900000-0000-7000-8000-000000000001';
  const command = createCommand('replayed', id);
  const first = await execute(ctx, command);
  expect(first.replayed).toBe(false);
  const before = await taskView(t, 'replayed');
  expect(before.history).toEqual([`${id}@1`]);

  // The record that made a repeat a no-op is gone, as after its retention.
  expect(await sweepOperations(standaloneContext(t.store), Date.now() + 2 * DAY)).toBeGreaterThan(0);
  const again = await execute(ctx, command);
  expect(again.replayed).toBe(true);
  expect(again.version).toBe(1);
  expect(again.doc.json).toBe(first.doc.json);
  expect(await taskView(t, 'replayed')).toEqual(before);
  expect(before.task).toMatchObject({ checkpoints: 1, latestCheckpointId: id });
  expect(before.verify).toEqual({ ok: true, entries: 1 });
});

it('leaves a checkpoint that moved on alone when its create is replayed after the record expired', async () => {
  const t = app();
  const ctx = standaloneContext(t.store);
  const id = '01900000-0000-7000-8000-000000000002';
  const command = createCommand('moved-on', id);
  await execute(ctx, command);
  const patched = await t.app.inject({ method: 'PATCH', url: `/v1/checkpoints/${id}`, headers: { ...auth(), 'if-match': '"1"' }, payload: { labels: { step: 2 } } });
  expect(patched.statusCode, patched.body).toBe(200);
  const before = await taskView(t, 'moved-on');

  await sweepOperations(standaloneContext(t.store), Date.now() + 2 * DAY);
  const again = await execute(ctx, command);
  expect(again).toMatchObject({ replayed: true, version: 1 });
  expect(await taskView(t, 'moved-on')).toEqual(before);
  expect(before.history).toEqual([`${id}@2`]);
});

it('refuses a create whose id is taken by other content or by another task, and writes nothing', async () => {
  const t = app();
  const ctx = standaloneContext(t.store);
  const id = '01900000-0000-7000-8000-000000000003';
  await execute(ctx, createCommand('taken', id));
  const before = await taskView(t, 'taken');

  const other = execute(ctx, createCommand('taken', id, { labels: { other: true } }, 'op:other'));
  await expect(other).rejects.toBeInstanceOf(AppError);
  await expect(other).rejects.toMatchObject({ code: 'conflict' });
  const elsewhere = execute(ctx, createCommand('elsewhere', id, {}, 'op:elsewhere'));
  await expect(elsewhere).rejects.toMatchObject({ code: 'conflict' });

  expect(await taskView(t, 'taken')).toEqual(before);
  const missing = await t.app.inject({ method: 'GET', url: '/v1/tasks/elsewhere', headers: auth() });
  expect(missing.statusCode).toBe(404);
});
