/**
 * Fencing checks a lease's expiry at the time of the write itself, not when
 * the sweeper gets round to it: with the clock moved past a lease's expiry
 * and no sweep, the holder's epoch is already outdated (409
 * lease_superseded, the task's epoch one above it, as after the sweep), and
 * a write without an epoch is accepted, as on a task without a live lease.
 */
import { describe, expect, it } from 'vitest';
import { useClockedTestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';
import { call, create, epoch, eventTypes, ok } from './helpers.js';

describe('a lease past its expiry, not yet swept', () => {
  // The sweeper would run once a minute of real time: never within these tests.
  const { app, clock } = useClockedTestApp('2026-11-23T10:00:00.000Z', { config: { leaseSweepMs: 60_000 } });

  it('outdates its epoch at once: the holder\'s writes are 409 lease_superseded, from the exact expiry on', async () => {
    const t = app();
    const cp = await create(t, 'fx-1');
    const lease = await ok(t, 'POST', '/v1/tasks/fx-1/lease', { agentId: 'a', ttlMs: 1_000 }, {}, 201);
    expect(lease.epoch).toBe(1);
    clock.advance(999);
    await create(t, 'fx-1', {}, epoch(1));
    clock.advance(1);
    // The lease ends at expiresAt: from that instant its epoch no longer writes.
    const refused = expectProblem(await call(t, 'POST', '/v1/checkpoints', { taskId: 'fx-1', agentId: 'a' }, epoch(1)), 409, 'lease_superseded');
    expect(refused.epoch).toBe(2);
    clock.advance(60_000);
    expectProblem(await call(t, 'POST', '/v1/checkpoints', { taskId: 'fx-1', agentId: 'a' }, epoch(1)), 409, 'lease_superseded');
    expectProblem(await call(t, 'PATCH', `/v1/checkpoints/${cp.id}`, { labels: { late: true } }, { 'if-match': '"1"', ...epoch(1) }), 409, 'lease_superseded');
    expectProblem(await call(t, 'POST', `/v1/checkpoints/${cp.id}/finalize`, { status: 'completed' }, epoch(1)), 409, 'lease_superseded');
    expectProblem(await call(t, 'POST', `/v1/checkpoints/${cp.id}/handoff`, { trigger: 'explicit' }, epoch(1)), 409, 'lease_superseded');
    // Nobody swept: the refusals came from the write's own check.
    expect(await eventTypes(t, 'fx-1')).toEqual(['CHECKPOINT_CREATED', 'LEASE_ACQUIRED', 'CHECKPOINT_CREATED']);
    expect(await ok(t, 'GET', '/v1/tasks/fx-1')).toMatchObject({ lease: null, epoch: 2 });
  });

  it('accepts a write without an epoch, as a task without a live lease does', async () => {
    const t = app();
    await ok(t, 'POST', '/v1/tasks/fx-2/lease', { agentId: 'a', ttlMs: 1_000 }, {}, 201);
    expectProblem(await call(t, 'POST', '/v1/checkpoints', { taskId: 'fx-2', agentId: 'a' }), 428, 'lease_required');
    clock.advance(5_000);
    const written = await create(t, 'fx-2');
    expect(written.taskId).toBe('fx-2');
    // The outdated epoch stays outdated, and the next lease is above it.
    expectProblem(await call(t, 'POST', '/v1/checkpoints', { taskId: 'fx-2', agentId: 'a' }, epoch(1)), 409, 'lease_superseded');
    const next = await ok(t, 'POST', '/v1/tasks/fx-2/lease', { agentId: 'b', ttlMs: 60_000 }, {}, 201);
    expect(next.epoch).toBeGreaterThan(2);
    await create(t, 'fx-2', {}, epoch(next.epoch as number));
    expect((await ok(t, 'GET', '/v1/tasks/fx-2/audit/verify')) as Json).toMatchObject({ ok: true });
  });
});
