/**
 * Lease and task expiry entries (`lexp`, `texp`) are spread over buckets by
 * a hash of their lease or task, so writes land on several ranges instead of
 * appending at the end of one; the sweepers read each bucket's due range,
 * oldest first across them. Entries written before buckets, by an earlier
 * release, are still found by the sweepers and cleared when their lease is
 * renewed or ended, or their task purged (`docs/keyspace.md`).
 */
import { describe, expect, it } from 'vitest';
import { execute } from '../../src/service/execute.js';
import { expiryPurge } from '../../src/service/maintenance/runner.js';
import { BUCKETS, bucketOf } from '../../src/service/repository/expiry-buckets.js';
import { dueLeases, expiredTasks } from '../../src/service/repository/repository.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { systemKeyspace, type Subspace } from '../../src/store/keyspace.js';
import { auth, checkpointBody, useClockedTestApp, type TestApp } from '../support/app.js';
import { eventTypes, until } from '../http/protocol/helpers.js';

const START = '2026-11-27T10:00:00.000Z';
const spaces = systemKeyspace();

async function ok(t: TestApp, method: 'POST' | 'PUT', url: string, payload: Record<string, unknown>, who: 'writer' | 'admin' = 'writer'): Promise<Record<string, unknown>> {
  const res = await t.app.inject({ method, url, headers: auth(who), payload });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json() as Record<string, unknown>;
}

/** Every entry of `space`, its key's parts. */
async function entries(t: TestApp, space: Subspace): Promise<unknown[][]> {
  const rows = await t.store.transact((tx) => tx.getPrefix(space.prefix), { readOnly: true });
  return rows.map((row) => space.unpack(row.key));
}

/** Rewrites an entry as a release before buckets wrote it: the same parts, without the bucket. */
async function unbucket(t: TestApp, space: Subspace, parts: unknown[]): Promise<void> {
  await t.store.transact(async (tx) => {
    tx.clear(space.pack(...(parts as string[])));
    tx.set(space.pack(...(parts.slice(1) as string[])), Buffer.alloc(0));
  });
}

describe('expiry entries, as the service writes them', () => {
  const { app, clock } = useClockedTestApp(START, { config: { leaseSweepMs: 60_000, retentionSweepMs: 60_000 } });

  it('land in several buckets, each a hash of the lease or the task, and are read oldest first across them', async () => {
    const t = app();
    const leases: { leaseId: string; expiresAt: string }[] = [];
    for (let i = 0; i < 32; i++) {
      const taskId = `bucketed-${String(i).padStart(2, '0')}`;
      expect((await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId) })).statusCode).toBe(201);
      const lease = await ok(t, 'POST', `/v1/tasks/${taskId}/lease`, { agentId: 'a', ttlMs: 60_000 + i * 1_000 });
      leases.push({ leaseId: lease.leaseId as string, expiresAt: lease.expiresAt as string });
      await ok(t, 'PUT', `/v1/tasks/${taskId}/policy`, { expireAfter: `PT${i + 1}M` }, 'admin');
    }

    const leaseEntries = await entries(t, spaces.leaseExpiry);
    expect(leaseEntries).toHaveLength(32);
    for (const [bucket, , , , leaseId] of leaseEntries) expect(bucket).toBe(bucketOf(leaseId as string));
    expect(new Set(leaseEntries.map(([bucket]) => bucket)).size).toBeGreaterThanOrEqual(BUCKETS / 2);

    const taskEntries = await entries(t, spaces.taskExpiry);
    expect(taskEntries).toHaveLength(32);
    for (const [bucket, , tenant, taskId] of taskEntries) expect(bucket).toBe(bucketOf(`${tenant as string}\u0000${taskId as string}`));
    expect(new Set(taskEntries.map(([bucket]) => bucket)).size).toBeGreaterThanOrEqual(BUCKETS / 2);

    // Spread over buckets, still the oldest first: the leases and tasks that expire first, in order.
    clock.advance(24 * 60 * 60 * 1000);
    const now = clock.now().toISOString();
    const due = await t.store.transact((tx) => dueLeases(tx, now, 5), { readOnly: true });
    expect(due.map((d) => d.leaseId)).toEqual(leases.slice(0, 5).map((l) => l.leaseId));
    expect(due.map((d) => d.expiresAt)).toEqual(leases.slice(0, 5).map((l) => l.expiresAt));
    const tasks = await t.store.transact((tx) => expiredTasks(tx, now, 5), { readOnly: true });
    expect(tasks.map((d) => d.taskId)).toEqual(['bucketed-00', 'bucketed-01', 'bucketed-02', 'bucketed-03', 'bucketed-04']);
  });

  it('still finds a task expiry entry written before buckets, and the purge clears it', async () => {
    const t = app();
    const ctx = standaloneContext(t.store, { now: clock.now });
    expect((await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('unbucketed-task') })).statusCode).toBe(201);
    await ok(t, 'PUT', '/v1/tasks/unbucketed-task/policy', { expireAfter: 'PT1M' }, 'admin');
    const [entry] = await entries(t, spaces.taskExpiry);
    await unbucket(t, spaces.taskExpiry, entry!);
    expect(await entries(t, spaces.taskExpiry)).toEqual([entry!.slice(1)]);

    clock.advance(2 * 60_000);
    const found = await t.store.transact((tx) => expiredTasks(tx, clock.now().toISOString(), 100), { readOnly: true });
    expect(found).toEqual([{ expiresAt: entry![1], tenant: 'default', taskId: 'unbucketed-task' }]);
    expect(await execute(ctx, expiryPurge(ctx, found[0]!))).toMatchObject({ done: true });
    expect((await t.app.inject({ method: 'GET', url: '/v1/tasks/unbucketed-task/checkpoints', headers: auth() })).json()).toMatchObject({ items: [] });
    expect(await entries(t, spaces.taskExpiry)).toEqual([]);
  });
});

describe('lease expiry entries written before buckets', () => {
  const { app, clock } = useClockedTestApp(START, { config: { leaseSweepMs: 20 } });

  it('are swept by the lease sweeper, and cleared when their lease is renewed', async () => {
    const t = app();
    await ok(t, 'POST', '/v1/tasks/unbucketed-swept/lease', { agentId: 'a', ttlMs: 60_000 });
    const renewed = await ok(t, 'POST', '/v1/tasks/unbucketed-renewed/lease', { agentId: 'b', ttlMs: 60_000 });
    for (const entry of await entries(t, spaces.leaseExpiry)) await unbucket(t, spaces.leaseExpiry, entry);
    expect((await entries(t, spaces.leaseExpiry)).map(([first]) => typeof first)).toEqual(['string', 'string']);

    // Renewed: its old entry goes, a bucketed one takes its place.
    const next = await ok(t, 'POST', `/v1/leases/${renewed.leaseId as string}/renew`, { ttlMs: 24 * 60 * 60 * 1000 });
    const after = await entries(t, spaces.leaseExpiry);
    expect(after).toContainEqual([bucketOf(renewed.leaseId as string), next.expiresAt, 'default', 'unbucketed-renewed', renewed.leaseId]);
    expect(after.filter(([, , , , leaseId]) => leaseId === renewed.leaseId)).toHaveLength(1);

    // Past its expiry (and the clock-skew allowance): the sweeper ends the lease from its unbucketed entry, and the entry goes.
    clock.advance(2 * 60_000);
    await until(async () => (await eventTypes(t, 'unbucketed-swept')).includes('LEASE_EXPIRED'));
    expect(await entries(t, spaces.leaseExpiry)).toEqual([[bucketOf(renewed.leaseId as string), next.expiresAt, 'default', 'unbucketed-renewed', renewed.leaseId]]);
    expect(await eventTypes(t, 'unbucketed-renewed')).not.toContain('LEASE_EXPIRED');
  });
});
