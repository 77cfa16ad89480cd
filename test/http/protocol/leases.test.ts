/**
 * Leases and fencing (DESIGN §3): one holder per task, renew and release,
 * every write to a leased task carries the epoch, expiry is announced once
 * with LEASE_EXPIRED, also by a service that restarted meanwhile.
 */
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { buildTestApp, useTestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';
import { call, create, epoch, eventTypes, ok, until } from './helpers.js';

describe('leases', () => {
  const app = useTestApp({ config: { leaseSweepMs: 20 } });

  it('gives one holder per task: another agent gets 409 lease_held, the holder asking again keeps its lease', async () => {
    const t = app();
    const first = await ok(t, 'POST', '/v1/tasks/t-1/lease', { agentId: 'a', ttlMs: 60_000 }, {}, 201);
    expect(first).toMatchObject({ taskId: 't-1', agentId: 'a', epoch: 1, status: 'active' });
    expect(Date.parse(String(first.expiresAt)) - Date.parse(String(first.acquiredAt))).toBe(60_000);
    expectProblem(await call(t, 'POST', '/v1/tasks/t-1/lease', { agentId: 'b', ttlMs: 1_000 }), 409, 'lease_held');
    const again = await ok(t, 'POST', '/v1/tasks/t-1/lease', { agentId: 'a', ttlMs: 30_000 }, {}, 201);
    expect(again).toMatchObject({ leaseId: first.leaseId, epoch: 1 });
    expect(await eventTypes(t, 't-1')).toEqual(['LEASE_ACQUIRED']);
  });

  it('fences writes: none while leased is 428, an older epoch 409 lease_superseded, the holder epoch passes', async () => {
    const t = app();
    const cp = await create(t, 't-2');
    await ok(t, 'POST', '/v1/tasks/t-2/lease', { agentId: 'a', ttlMs: 60_000 }, {}, 201);
    const patch = { labels: { step: 2 } };
    expectProblem(await call(t, 'PATCH', `/v1/checkpoints/${cp.id}`, patch, { 'if-match': '"1"' }), 428, 'lease_required');
    expectProblem(await call(t, 'POST', '/v1/checkpoints', { taskId: 't-2', agentId: 'a' }), 428, 'lease_required');
    expectProblem(await call(t, 'PATCH', `/v1/checkpoints/${cp.id}`, patch, { 'if-match': '"1"', ...epoch(0) }), 409, 'lease_superseded');
    expectProblem(await call(t, 'PATCH', `/v1/checkpoints/${cp.id}`, patch, { 'if-match': '"1"', ...epoch(7) }), 400, 'validation_failed');
    expect((await ok(t, 'PATCH', `/v1/checkpoints/${cp.id}`, patch, { 'if-match': '"1"', ...epoch(1) })).version).toBe(2);
    // Other tasks are not fenced.
    await create(t, 't-other');
  });

  it('renews only the current live lease, and releasing frees the task for another agent', async () => {
    const t = app();
    const lease = await ok(t, 'POST', '/v1/tasks/t-3/lease', { agentId: 'a', ttlMs: 5_000 }, {}, 201);
    const renewed = await ok(t, 'POST', `/v1/leases/${lease.leaseId}/renew`, { ttlMs: 50_000 });
    expect(renewed).toMatchObject({ leaseId: lease.leaseId, epoch: 1, ttlMs: 50_000 });
    expect(String(renewed.expiresAt) > String(lease.expiresAt)).toBe(true);
    expect(await ok(t, 'POST', `/v1/leases/${lease.leaseId}/release`)).toMatchObject({ status: 'released' });
    // Releasing again answers the lease as it is.
    expect(await ok(t, 'POST', `/v1/leases/${lease.leaseId}/release`)).toMatchObject({ status: 'released' });
    expectProblem(await call(t, 'POST', `/v1/leases/${lease.leaseId}/renew`, {}), 409, 'lease_released');
    const next = await ok(t, 'POST', '/v1/tasks/t-3/lease', { agentId: 'b', ttlMs: 5_000 }, {}, 201);
    expect(next.epoch).toBe(2);
    expect(await ok(t, 'POST', `/v1/leases/${lease.leaseId}/release`)).toMatchObject({ status: 'released' });
    expectProblem(await call(t, 'POST', `/v1/leases/${lease.leaseId}/renew`, {}), 409, 'lease_released');
    // A released task accepts writes without an epoch only until the next lease: now epoch 1 is stale.
    expectProblem(await call(t, 'POST', '/v1/checkpoints', { taskId: 't-3', agentId: 'a' }, epoch(1)), 409, 'lease_superseded');
    expectProblem(await call(t, 'POST', '/v1/leases/00000000-0000-7000-8000-000000000000/renew', {}), 404, 'not_found');
  });

  it('announces an expired lease once with LEASE_EXPIRED; renewing it afterwards is 409 lease_expired', async () => {
    const t = app();
    const lease = await ok(t, 'POST', '/v1/tasks/t-4/lease', { agentId: 'a', ttlMs: 100 }, {}, 201);
    await until(async () => (await eventTypes(t, 't-4')).includes('LEASE_EXPIRED'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await eventTypes(t, 't-4')).toEqual(['LEASE_ACQUIRED', 'LEASE_EXPIRED']);
    expectProblem(await call(t, 'POST', `/v1/leases/${lease.leaseId}/renew`, {}), 409, 'lease_expired');
    const task = await ok(t, 'GET', '/v1/tasks/t-4');
    expect(task).toMatchObject({ lease: null, epoch: 2 });
    // The expired holder is presumed dead: its epoch is refused at once; the task takes writes without a lease again.
    expectProblem(await call(t, 'POST', '/v1/checkpoints', { taskId: 't-4', agentId: 'a' }, epoch(1)), 409, 'lease_superseded');
    await create(t, 't-4');
    expect((await ok(t, 'POST', '/v1/tasks/t-4/lease', { agentId: 'a', ttlMs: 5_000 }, {}, 201)).epoch).toBe(3);
  });

  it('answers lease requests with problems for bad input', async () => {
    const t = app();
    expectProblem(await call(t, 'POST', '/v1/tasks/t-5/lease', { agentId: 'a', ttlMs: 5 }), 400, 'validation_failed');
    expectProblem(await call(t, 'POST', '/v1/tasks/t-5/lease', { ttlMs: 5_000 }), 400, 'validation_failed');
    expectProblem(await call(t, 'POST', '/v1/leases/not-a-uuid/renew', {}), 400, 'validation_failed');
    expectProblem(await call(t, 'POST', '/v1/tasks/t-5/lease', { agentId: 'a', ttlMs: 5_000 }, {}, 'auditor'), 403, 'forbidden');
  });
});

it('announces a lease that expired while the service was down, once, after it restarts', async () => {
  const first = await buildTestApp({ config: { leaseSweepMs: 60_000 } });
  const { dir, config } = first;
  await ok(first, 'POST', '/v1/tasks/t-restart/lease', { agentId: 'a', ttlMs: 100 }, {}, 201);
  await first.app.close();
  await first.store.close();
  await new Promise((resolve) => setTimeout(resolve, 150));

  // The same store again, on LMDB or FoundationDB as the suite runs.
  const store = await first.reopen();
  const app = await buildApp({ config: { ...config, leaseSweepMs: 20 }, store });
  const again = { app, store, dir, config, reopen: first.reopen, close: async () => undefined };
  try {
    await until(async () => (await eventTypes(again, 't-restart')).includes('LEASE_EXPIRED'));
    await new Promise((resolve) => setTimeout(resolve, 150));
    const events = (await ok(again, 'GET', '/v1/events?types=LEASE_EXPIRED')).items as Json[];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'LEASE_EXPIRED', data: { taskId: 't-restart', agentId: 'a', epoch: 1 } });
    expect(await ok(again, 'GET', '/v1/tasks/t-restart/audit/verify')).toMatchObject({ ok: true });
  } finally {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
