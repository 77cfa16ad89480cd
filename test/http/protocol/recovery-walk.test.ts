/**
 * The walk to a recovery point outlasts one transaction's read budget: with
 * more corrupt checkpoints in front of the last good one than one read
 * transaction may look at (the records really damaged in the LMDB file),
 * the walk carries on in the next transaction and finds it. It never
 * claims that no checkpoint verifies when it has not looked at them all.
 */
import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue, tenantKeyspace } from '../../../src/store/keyspace.js';
import { decompress } from '../../../src/service/repository/compression.js';
import { READ_BUDGET } from '../../../src/service/repository/read-budget.js';
import { MAX_STEPS } from '../../../src/service/recovery-point.js';
import { useTestApp, type TestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';
import { call, create, ok } from './helpers.js';

/**
 * More corrupt checkpoints than one transaction's budget lets the walk look
 * at: each step reads at least three keys (the history entry, the record,
 * its parent link), so one budget covers at most a third of its keys in
 * steps; fewer than the walk's own limit, which is another matter.
 */
const CORRUPT = 900;

/** Damages the stored text of every checkpoint in `ids` (its old hash kept), in one transaction. */
async function tamperAll(t: TestApp, taskId: string, ids: string[]): Promise<void> {
  const space = tenantKeyspace('default').checkpoints;
  await t.store.transact(async (tx) => {
    for (const id of ids) {
      const key = space.pack(taskId, id, 0);
      const bytes = await tx.get(key);
      expect(bytes).toBeDefined();
      const record = decodeValue<{ c: string; h: string }>(decompress(Buffer.from(bytes!)));
      tx.set(key, encodeValue({ ...record, c: record.c.replace('"agent', '"Agent') }));
    }
  });
}

/** The good checkpoint first, then `count` more, damaged. */
async function goodBehindCorrupt(t: TestApp, taskId: string, count: number): Promise<{ good: Json; corrupt: string[] }> {
  const good = await create(t, taskId);
  const corrupt: string[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => create(t, taskId)));
    corrupt.push(...batch.map((cp) => String(cp.id)));
  }
  await tamperAll(t, taskId, corrupt);
  return { good, corrupt };
}

describe('the walk to a recovery point', () => {
  const app = useTestApp({ config: { recoveryMaxAttempts: 3 } });

  it('passes more corrupt checkpoints than one read budget allows and finds the good one behind them', { timeout: 120_000 }, async () => {
    expect(CORRUPT).toBeGreaterThan(READ_BUDGET.keys / 3);
    expect(CORRUPT).toBeLessThan(MAX_STEPS);
    const t = app();
    const { good, corrupt } = await goodBehindCorrupt(t, 'walk', CORRUPT);

    const point = await ok(t, 'GET', '/v1/tasks/walk/recovery-point');
    expect((point.checkpoint as Json).id).toBe(good.id);
    expect((point.skipped as string[]).length).toBe(CORRUPT);
    expect(new Set(point.skipped as string[])).toEqual(new Set(corrupt));
    expect((await ok(t, 'GET', '/v1/tasks/walk')).recoveryPointId).toBe(good.id);

    const started = await ok(t, 'POST', '/v1/tasks/walk/recoveries', { reason: 'agent crashed', failure: { kind: 'crash' } }, {}, 201);
    expect(started.recovery).toMatchObject({ status: 'initiated', checkpointId: good.id });
    expect((started.checkpoint as Json).id).toBe(good.id);
  });

  it('says the walk stopped when it gives up before the last checkpoint, never that none verifies', { timeout: 120_000 }, async () => {
    const t = app();
    await goodBehindCorrupt(t, 'walk-limit', MAX_STEPS + 20);
    const res = await call(t, 'GET', '/v1/tasks/walk-limit/recovery-point');
    const problem = expectProblem(res, 409, 'checkpoint_corrupted');
    expect(problem.walkComplete).toBe(false);
    expect((problem.corrupted as string[]).length).toBe(MAX_STEPS);
    expect(String(problem.detail)).not.toContain('No checkpoint of this task verifies');
    expect(String(problem.detail)).toContain('older ones were not looked at');

    const started = await ok(t, 'POST', '/v1/tasks/walk-limit/recoveries', { reason: 'agent crashed', failure: { kind: 'crash' } }, {}, 201);
    expect(started.recovery).toMatchObject({ status: 'blocked', blockedReason: 'walk_limit_reached' });
    const blocked = ((await ok(t, 'GET', '/v1/events?types=TASK_BLOCKED')).items as Json[]).map((e) => (e.data as Json).reason);
    expect(blocked).toEqual(['walk_limit_reached']);
  });
});
