/**
 * Recovery (DESIGN §3): the recovery point walks back past corrupt
 * checkpoints, a recovery fences the failed agent at once, a circuit breaker
 * blocks a task that keeps failing, and completing hands the task on.
 */
import { describe, expect, it } from 'vitest';
import { MAX_OPEN_RECOVERIES } from '../../../src/service/recovery.js';
import { useTestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';
import { call, create, epoch, eventTypes, ok, tamper } from './helpers.js';

const crash = { reason: 'agent stopped answering', failure: { kind: 'crash', message: 'no heartbeat' } };

describe('recovery', () => {
  const app = useTestApp({ config: { recoveryMaxAttempts: 3 } });

  it('finds the newest checkpoint that verifies, passing and reporting corrupt ones', async () => {
    const t = app();
    const first = await create(t, 'r-1');
    const second = await create(t, 'r-1', { parentId: first.id });
    const third = await create(t, 'r-1', { recovery: { lastSuccessfulState: first.id } });
    expect(((await ok(t, 'GET', '/v1/tasks/r-1/recovery-point')).checkpoint as Json).id).toBe(third.id);

    // The corrupt newest names the first as its last good state: the walk follows that hint.
    await tamper(t, third);
    const point = await ok(t, 'GET', '/v1/tasks/r-1/recovery-point');
    expect((point.checkpoint as Json).id).toBe(first.id);
    expect(point.skipped).toEqual([third.id]);

    // With the first corrupt too, the walk falls back to the history: the second verifies.
    await tamper(t, first);
    const next = await ok(t, 'GET', '/v1/tasks/r-1/recovery-point');
    expect((next.checkpoint as Json).id).toBe(second.id);
    expect(next.skipped).toEqual([third.id, first.id]);

    await tamper(t, second);
    const none = expectProblem(await call(t, 'GET', '/v1/tasks/r-1/recovery-point'), 409, 'checkpoint_corrupted');
    expect(none.corrupted).toEqual([third.id, first.id, second.id]);
    const corrupted = (await ok(t, 'GET', '/v1/events?types=CHECKPOINT_CORRUPTED')).items as Json[];
    expect(corrupted.map((e) => e.subject).sort()).toEqual([first.id, second.id, third.id].sort());
    expectProblem(await call(t, 'GET', '/v1/tasks/nobody/recovery-point'), 404, 'not_found');
  });

  it('starts a recovery from the recovery point and fences the failed agent at once', async () => {
    const t = app();
    const cp = await create(t, 'r-2');
    await ok(t, 'POST', '/v1/tasks/r-2/lease', { agentId: 'agent-1', ttlMs: 60_000 }, {}, 201);
    const res = await ok(t, 'POST', '/v1/tasks/r-2/recoveries', crash, {}, 201);
    const recovery = res.recovery as Json;
    expect(recovery).toMatchObject({ status: 'initiated', taskId: 'r-2', checkpointId: cp.id, reason: crash.reason, failure: crash.failure });
    expect((res.checkpoint as Json).id).toBe(cp.id);
    expect(res.continuationPrompt).toBe('Continue with p1.');
    // The failed agent's late write, with its own epoch, is refused before anyone takes over.
    expectProblem(await call(t, 'POST', '/v1/checkpoints', { taskId: 'r-2', agentId: 'agent-1' }, epoch(1)), 409, 'lease_superseded');

    const done = await ok(t, 'POST', `/v1/recoveries/${recovery.id}/complete`, { agentId: 'agent-2', ttlMs: 20_000 });
    expect(done.recovery).toMatchObject({ status: 'completed', agentId: 'agent-2' });
    expect(done.lease).toMatchObject({ agentId: 'agent-2', epoch: 3, status: 'active' });
    expect(await ok(t, 'POST', `/v1/recoveries/${recovery.id}/complete`, { agentId: 'agent-2', ttlMs: 20_000 })).toEqual(done);
    expectProblem(await call(t, 'POST', `/v1/recoveries/${recovery.id}/complete`, { agentId: 'agent-3' }), 409, 'recovery_taken');
    await create(t, 'r-2', {}, epoch(3));
    expect(await eventTypes(t, 'r-2')).toEqual(['CHECKPOINT_CREATED', 'LEASE_ACQUIRED', 'RECOVERY_INITIATED', 'RECOVERY_COMPLETED', 'LEASE_ACQUIRED', 'CHECKPOINT_CREATED']);
    expect(await ok(t, 'GET', '/v1/tasks/r-2/audit/verify')).toMatchObject({ ok: true });
    expect((await call(t, 'GET', '/metrics')).body).toMatch(/^recovery_attempts_total 1$/m);
  });

  it('blocks a task after three recoveries in the window, announces TASK_BLOCKED once, and an admin unblocks it', async () => {
    const t = app();
    await create(t, 'r-3');
    for (let i = 0; i < 3; i++) expect(((await ok(t, 'POST', '/v1/tasks/r-3/recoveries', crash, {}, 201)).recovery as Json).status).toBe('initiated');
    const blocked = (await ok(t, 'POST', '/v1/tasks/r-3/recoveries', crash, {}, 201)).recovery as Json;
    expect(blocked).toMatchObject({ status: 'blocked', blockedReason: 'circuit_open' });
    expect(((await ok(t, 'POST', '/v1/tasks/r-3/recoveries', crash, {}, 201)).recovery as Json)).toMatchObject({ status: 'blocked', blockedReason: 'task_blocked' });
    const types = await eventTypes(t, 'r-3');
    expect(types.filter((type) => type === 'RECOVERY_INITIATED')).toHaveLength(3);
    expect(types.filter((type) => type === 'TASK_BLOCKED')).toHaveLength(1);
    expect(await ok(t, 'GET', '/v1/tasks/r-3')).toMatchObject({ state: 'blocked', blocked: { reason: 'circuit_open' }, finished: false, success: false });
    expectProblem(await call(t, 'POST', `/v1/recoveries/${blocked.id}/complete`, { agentId: 'agent-2' }), 409, 'recovery_blocked');

    expectProblem(await call(t, 'POST', '/v1/tasks/r-3/unblock', {}), 403, 'forbidden');
    const unblocked = await t.app.inject({ method: 'POST', url: '/v1/tasks/r-3/unblock', headers: { authorization: 'Bearer admin-secret-0123456789abcdef' }, payload: { reason: 'fixed the tool' } });
    expect(unblocked.statusCode).toBe(200);
    expect(unblocked.json()).toMatchObject({ state: 'working', blocked: null });
    expect(((await ok(t, 'POST', '/v1/tasks/r-3/recoveries', crash, {}, 201)).recovery as Json).status).toBe('initiated');
  });

  it('blocks at once when the failure is unrecoverable', async () => {
    const t = app();
    await create(t, 'r-4');
    const res = await ok(t, 'POST', '/v1/tasks/r-4/recoveries', { reason: 'bad input', failure: { kind: 'error', recoverable: false } }, {}, 201);
    expect(res.recovery).toMatchObject({ status: 'blocked', blockedReason: 'unrecoverable' });
    expect(await eventTypes(t, 'r-4')).toEqual(['CHECKPOINT_CREATED', 'TASK_BLOCKED']);
  });

  it('answers bad recovery requests with problems', async () => {
    const t = app();
    expectProblem(await call(t, 'POST', '/v1/tasks/r-none/recoveries', crash), 404, 'not_found');
    await create(t, 'r-5');
    expectProblem(await call(t, 'POST', '/v1/tasks/r-5/recoveries', { reason: 'x', failure: { kind: 'meteor' } }), 400, 'validation_failed');
    expectProblem(await call(t, 'POST', '/v1/recoveries/00000000-0000-7000-8000-000000000000/complete', { agentId: 'a' }), 404, 'not_found');
  });
});

describe('recoveries left open', () => {
  const app = useTestApp({ config: { recoveryMaxAttempts: 100 } });

  it('past the bound, the oldest open recovery’s checkpoint may be compacted, and completing it is then 410, never unchecked', async () => {
    const t = app();
    const source = await create(t, 'r-open', { codeVersion: 'graph:v1' });
    const first = (await ok(t, 'POST', '/v1/tasks/r-open/recoveries', crash, {}, 201)).recovery as Json;
    // Each later recovery starts from a newer checkpoint, until the first falls out of the head's bound.
    for (let i = 0; i < MAX_OPEN_RECOVERIES; i++) {
      await create(t, 'r-open', { codeVersion: 'graph:v2' });
      expect(((await ok(t, 'POST', '/v1/tasks/r-open/recoveries', crash, {}, 201)).recovery as Json).status).toBe('initiated');
    }
    const compacted = await call(t, 'POST', '/v1/tasks/r-open/compact', { keepLast: 1 }, {}, 'admin');
    expect(compacted.statusCode).toBe(200);
    expect((compacted.json() as Json).removed).toEqual([source.id]);
    expectProblem(await call(t, 'POST', `/v1/recoveries/${first.id}/complete`, { agentId: 'late', codeVersion: 'graph:v9' }), 410, 'checkpoint_compacted');
  });
});
