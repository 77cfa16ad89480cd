/**
 * Clocks of instances over one store disagree by up to `BATON_CLOCK_SKEW_MS`
 * (DESIGN §10): a lease is never taken from its holder before its expiry
 * plus that allowance — not by another agent's acquisition, not by the
 * sweeper's `LEASE_EXPIRED` — while the holder's own epoch stops writing at
 * the expiry itself, so in between nobody writes with it. The allowance is
 * the test's own clock offset from the lease's expiry.
 */
import { describe, expect, it } from 'vitest';
import { useClockedTestApp } from '../../support/app.js';
import { expectProblem } from '../../support/problems.js';
import { call, epoch, eventTypes, ok } from './helpers.js';

describe('a lease within the clock-skew allowance after its expiry', () => {
  const { app, clock } = useClockedTestApp('2026-11-27T10:00:00.000Z', { config: { leaseSweepMs: 20, clockSkewMs: 500 } });
  const sweeps = () => new Promise((resolve) => setTimeout(resolve, 150));

  it('is neither taken by another agent nor expired by the sweeper until the allowance has passed', async () => {
    const t = app();
    expect(await ok(t, 'POST', '/v1/tasks/skew-1/lease', { agentId: 'a', ttlMs: 1_000 }, {}, 201)).toMatchObject({ epoch: 1 });
    // 400 ms past the expiry by this instance's clock: the holder's may be 400 ms behind.
    clock.advance(1_400);
    expectProblem(await call(t, 'POST', '/v1/tasks/skew-1/lease', { agentId: 'b', ttlMs: 1_000 }), 409, 'lease_held');
    await sweeps();
    expect(await eventTypes(t, 'skew-1')).toEqual(['LEASE_ACQUIRED']);
    // The holder's epoch no longer writes: in the allowance nobody writes with the lease.
    expectProblem(await call(t, 'POST', '/v1/checkpoints', { taskId: 'skew-1', agentId: 'a' }, epoch(1)), 409, 'lease_superseded');

    clock.advance(200);
    await sweeps();
    expect(await eventTypes(t, 'skew-1')).toEqual(['LEASE_ACQUIRED', 'LEASE_EXPIRED']);
    expect(await ok(t, 'POST', '/v1/tasks/skew-1/lease', { agentId: 'b', ttlMs: 1_000 }, {}, 201)).toMatchObject({ epoch: 3 });
  });
});
