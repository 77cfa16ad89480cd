/**
 * The expiry purge across instances (DESIGN §10): each sweeper reads the due
 * tasks in one transaction and purges in another, so another instance's
 * write, or its purge, may land in between. The purge re-checks inside its
 * own transaction that the task is still due, and its operation id is the
 * task's and the expiry's, whoever runs it: a checkpoint written at the
 * moment of expiry survives, and two sweepers that both found a task due
 * leave one tombstone.
 */
import { expect, it } from 'vitest';
import { execute } from '../../src/service/execute.js';
import { expiryPurge } from '../../src/service/maintenance/runner.js';
import { expiredTasks } from '../../src/service/repository/repository.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { auth, checkpointBody, useClockedTestApp, type TestApp } from '../support/app.js';

const { app, clock } = useClockedTestApp('2026-11-27T10:00:00.000Z');

async function call(t: TestApp, method: 'GET' | 'POST' | 'PUT', url: string, payload?: Record<string, unknown>) {
  const res = await t.app.inject({ method, url, headers: auth('admin'), ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

async function due(t: TestApp) {
  return t.store.transact((tx) => expiredTasks(tx, clock.now().toISOString(), 100), { readOnly: true });
}

async function audit(t: TestApp, taskId: string): Promise<string[]> {
  return ((await call(t, 'GET', `/v1/tasks/${taskId}/audit?limit=1000`)).body.items as { action: string }[]).map((e) => e.action);
}

it('leaves a task that a write moved on after the sweeper found it due: the new checkpoint survives', async () => {
  const t = app();
  const ctx = standaloneContext(t.store, { now: clock.now });
  expect((await call(t, 'POST', '/v1/checkpoints', checkpointBody('expiring'))).status).toBe(201);
  expect((await call(t, 'PUT', '/v1/tasks/expiring/policy', { expireAfter: 'PT1M' })).status).toBe(200);
  clock.advance(2 * 60_000);
  const found = await due(t);
  expect(found.map((d) => d.taskId)).toEqual(['expiring']);
  // Another instance's agent writes the task after this sweeper read it as due.
  const written = await call(t, 'POST', '/v1/checkpoints', checkpointBody('expiring'));
  expect(written.status).toBe(201);
  const step = await execute(ctx, expiryPurge(ctx, found[0]!));
  expect(step).toMatchObject({ purged: 0, due: false });
  expect((await call(t, 'GET', `/v1/checkpoints/${written.body.id as string}`)).status).toBe(200);
  expect(await audit(t, 'expiring')).not.toContain('task.purged');
});

it('leaves one tombstone when two sweepers found the same task due', async () => {
  const t = app();
  const first = standaloneContext(t.store, { now: clock.now });
  const second = standaloneContext(t.store, { now: clock.now });
  expect((await call(t, 'POST', '/v1/checkpoints', checkpointBody('expired-twice'))).status).toBe(201);
  expect((await call(t, 'PUT', '/v1/tasks/expired-twice/policy', { expireAfter: 'PT1M' })).status).toBe(200);
  clock.advance(2 * 60_000);
  const [seenByFirst] = await due(t);
  const [seenBySecond] = await due(t);
  expect((await execute(first, expiryPurge(first, seenByFirst!))).done).toBe(true);
  clock.advance(5);
  await execute(second, expiryPurge(second, seenBySecond!));
  const actions = await audit(t, 'expired-twice');
  expect(actions.filter((action) => action === 'task.purged')).toHaveLength(1);
  expect((await call(t, 'GET', '/v1/tasks/expired-twice/audit/verify')).body).toMatchObject({ ok: true });
});
