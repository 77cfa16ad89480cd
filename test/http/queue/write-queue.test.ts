/**
 * The durable local write queue over HTTP (DESIGN §5), with the real store
 * made unavailable through fault injection: writes answered 202 with the ids
 * they will have, reads that see them, If-Match chains on queued versions,
 * replay once the store answers (exactly once, in order), a conflicting
 * write in the dead-letter list, and a full queue answered 503.
 */
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { auth, buildTestApp, checkpointBody, queueDrained, useTestApp, type TestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';

const admin = auth('admin');

async function faults(t: TestApp, store: 'ok' | 'unavailable'): Promise<void> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/admin/faults', headers: admin, payload: { store } });
  expect(res.statusCode, res.body).toBe(200);
}

function send(t: TestApp, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Json, headers: Record<string, string> = {}) {
  return t.app.inject({ method, url, headers: { ...auth(), ...headers }, ...(payload ? { payload } : {}) });
}

function drained(t: TestApp): Promise<void> {
  return queueDrained(t.app);
}

describe('write queue', () => {
  const app = useTestApp({ config: { queueReplayMs: 20 }, app: { faultInjection: true } });

  it('answers writes 202 while the store is down, shows them to reads, and applies them once the store is back', async () => {
    const t = app();
    await faults(t, 'unavailable');
    const created = await send(t, 'POST', '/v1/checkpoints', checkpointBody('q-1'));
    expect(created.statusCode, created.body).toBe(202);
    expect(created.headers['baton-queued']).toBe('true');
    const queued = created.json() as { queued: boolean; checkpointId: string; version: number; operationId: string; checkpoint: Json };
    expect(queued).toMatchObject({ queued: true, version: 1, checkpoint: { id: queued.checkpointId, taskId: 'q-1', version: 1 } });
    expect(created.headers.location).toBe(`/v1/checkpoints/${queued.checkpointId}`);

    // Reads see the queued checkpoint, marked; If-Match chains on the queued versions.
    const read = await send(t, 'GET', `/v1/checkpoints/${queued.checkpointId}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ queued: true, id: queued.checkpointId, version: 1 });
    const patched = await send(t, 'PATCH', `/v1/checkpoints/${queued.checkpointId}`, { labels: { step: 2 } }, { 'if-match': '"1"' });
    expect(patched.statusCode).toBe(202);
    expect(patched.json()).toMatchObject({ queued: true, version: 2, checkpoint: { labels: { team: 'core', step: 2 } } });
    expectProblem(await send(t, 'PATCH', `/v1/checkpoints/${queued.checkpointId}`, { labels: { step: 3 } }, { 'if-match': '"1"' }), 412, 'version_conflict');
    const finalized = await send(t, 'POST', `/v1/checkpoints/${queued.checkpointId}/finalize`, { status: 'completed' });
    expect(finalized.json()).toMatchObject({ queued: true, version: 3, checkpoint: { status: 'finalized' } });
    const view = (await send(t, 'GET', `/v1/checkpoints/${queued.checkpointId}`)).json() as Json;
    expect(view).toMatchObject({ queued: true, version: 3, status: 'finalized' });
    // Bad input is still refused at once, and nothing is queued for it.
    expectProblem(await send(t, 'POST', '/v1/checkpoints', { taskId: 'q-1' }), 400, 'validation_failed');
    expect(((await t.app.inject({ method: 'GET', url: '/readyz' })).json() as Json).queue).toMatchObject({ depth: 3 });

    await faults(t, 'ok');
    await drained(t);
    const stored = await send(t, 'GET', `/v1/checkpoints/${queued.checkpointId}`);
    expect(stored.headers['baton-queued']).toBeUndefined();
    const body = stored.json() as Json;
    expect(body.queued).toBeUndefined();
    // What the queue answered is what the store now holds: same content, same hash.
    const { queued: _q, ...expected } = view;
    expect(body).toEqual(expected);
    expect((await send(t, 'GET', '/v1/tasks/q-1/audit/verify')).json()).toMatchObject({ ok: true, entries: 3 });
    const types = ((await send(t, 'GET', '/v1/events?limit=100')).json() as { items: { type: string }[] }).items.map((e) => e.type);
    expect(types).toEqual(['CHECKPOINT_CREATED', 'CHECKPOINT_UPDATED', 'CHECKPOINT_FINALIZED']);
  });

  it('queues a write behind its task\'s queued writes even once the store is back, so each task keeps its order', async () => {
    const t = app();
    await faults(t, 'unavailable');
    for (let i = 0; i < 5; i++) expect((await send(t, 'POST', '/v1/checkpoints', checkpointBody('q-order', { labels: { n: i } }))).statusCode).toBe(202);
    // The store answers again, slowly: the replay (its first ping alone takes 1 s) cannot drain the task's
    // writes before the next one arrives, so there is one right answer for it.
    const slow = await t.app.inject({ method: 'POST', url: '/v1/admin/faults', headers: admin, payload: { store: 'slow', latencyMs: 1_000 } });
    expect(slow.statusCode).toBe(200);
    const after = await send(t, 'POST', '/v1/checkpoints', checkpointBody('q-order', { labels: { n: 5 } }));
    expect(after.statusCode, after.body).toBe(202);
    expect(after.headers['baton-queued']).toBe('true');
    await faults(t, 'ok');
    await drained(t);
    const history = (await send(t, 'GET', '/v1/tasks/q-order/checkpoints')).json() as { items: { labels: { n: number } }[] };
    expect(history.items.map((c) => c.labels.n)).toEqual([5, 4, 3, 2, 1, 0]);
  });

  it('moves a queued write that can no longer apply to the dead-letter list, with its event', async () => {
    const t = app();
    const cp = (await send(t, 'POST', '/v1/checkpoints', checkpointBody('q-dead'))).json() as Json;
    await faults(t, 'unavailable');
    const queued = await send(t, 'PATCH', `/v1/checkpoints/${cp.id}`, { labels: { from: 'queue' } }, { 'if-match': '"1"' });
    expect(queued.statusCode).toBe(202);
    expect(queued.json()).toMatchObject({ queued: true, version: 2 });
    // Another instance (a second app over the same store, without the fault) changes the checkpoint meanwhile.
    const other = await buildApp({ config: { ...t.config, queueMaxBytes: 0 }, store: t.store });
    const direct = await other.inject({ method: 'PATCH', url: `/v1/checkpoints/${cp.id}`, headers: { ...auth(), 'if-match': '"1"' }, payload: { labels: { from: 'direct' } } });
    expect(direct.statusCode).toBe(200);
    await other.close();
    await faults(t, 'ok');
    await drained(t);
    const stored = (await send(t, 'GET', `/v1/checkpoints/${cp.id}`)).json() as Json;
    expect(stored).toMatchObject({ version: 2, labels: { from: 'direct' } });
    const letters = (await t.app.inject({ method: 'GET', url: '/v1/admin/dead-letters', headers: admin })).json() as { items: Json[] };
    expect(letters.items).toHaveLength(1);
    expect(letters.items[0]).toMatchObject({ kind: 'checkpoint.update', checkpointId: cp.id, error: { code: 'version_conflict', status: 412 } });
    const events = ((await send(t, 'GET', '/v1/events?types=WRITE_DEAD_LETTERED')).json() as { items: Json[] }).items;
    expect(events).toHaveLength(1);
    // Audited on the task's chain like every other change, and the chain still verifies.
    const audit = (await send(t, 'GET', '/v1/tasks/q-dead/audit')).json() as { items: Json[] };
    expect(audit.items.filter((e) => e.action === 'write.dead_lettered')).toEqual([expect.objectContaining({ checkpointId: cp.id, details: expect.objectContaining({ kind: 'checkpoint.update', code: 'version_conflict' }) })]);
    expect((await send(t, 'GET', '/v1/tasks/q-dead/audit/verify')).json()).toMatchObject({ ok: true });
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^queue_dead_letters_total 1$/m);
    expectProblem(await send(t, 'GET', '/v1/admin/dead-letters'), 403, 'forbidden');
  });

  it('keeps a queued write through a conflict storm during its replay, and applies it once the store settles', async () => {
    const t = app();
    await faults(t, 'unavailable');
    const queued = (await send(t, 'POST', '/v1/checkpoints', checkpointBody('q-storm'))).json() as { checkpointId: string };
    // The store answers again, but every transaction conflicts: the replayer tries pass after pass.
    const storm = await t.app.inject({ method: 'POST', url: '/v1/admin/faults', headers: admin, payload: { store: 'error', code: 'conflict' } });
    expect(storm.json()).toMatchObject({ store: 'error', code: 'conflict' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(((await t.app.inject({ method: 'GET', url: '/readyz' })).json() as { queue: { depth: number } }).queue.depth).toBe(1);
    await faults(t, 'ok');
    await drained(t);
    const history = (await send(t, 'GET', '/v1/tasks/q-storm/checkpoints')).json() as { items: { id: string }[] };
    expect(history.items.map((c) => c.id)).toEqual([queued.checkpointId]);
    expect(((await t.app.inject({ method: 'GET', url: '/v1/admin/dead-letters', headers: admin })).json() as { items: unknown[] }).items).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^store_retries_total\{code="conflict"\} [1-9]\d*$/m);
  });

  it('refuses what the queue cannot take: ack while the store is down, and fault changes by a writer', async () => {
    const t = app();
    expectProblem(await t.app.inject({ method: 'POST', url: '/v1/admin/faults', headers: auth(), payload: { store: 'unavailable' } }), 403, 'forbidden');
    await faults(t, 'unavailable');
    expectProblem(await send(t, 'POST', '/v1/handoffs/00000000-0000-7000-8000-000000000000/ack', { agentId: 'b' }), 503, 'store_unavailable');
    expectProblem(await send(t, 'GET', '/v1/tasks/q-none'), 503, 'store_unavailable');
    // Writes can still be queued, so the instance stays ready, degraded (test/http/readiness.socket.test.ts).
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ status: 'degraded' });
  });
});

it('answers 503 queue_full with Retry-After once the queue holds its byte limit', async () => {
  const t = await buildTestApp({ config: { queueMaxBytes: 8_000, queueReplayMs: 60_000 }, app: { faultInjection: true } });
  try {
    await faults(t, 'unavailable');
    const answers: number[] = [];
    for (let i = 0; i < 10; i++) answers.push((await send(t, 'POST', '/v1/checkpoints', checkpointBody('q-full'))).statusCode);
    expect(answers.filter((s) => s === 202).length).toBeGreaterThan(0);
    const full = await send(t, 'POST', '/v1/checkpoints', checkpointBody('q-full'));
    expectProblem(full, 503, 'queue_full');
    expect(full.headers['retry-after']).toBeDefined();
  } finally {
    await t.close();
  }
});

it('is not there without --enable-fault-injection', async () => {
  const t = await buildTestApp();
  try {
    expect((await t.app.inject({ method: 'POST', url: '/v1/admin/faults', headers: admin, payload: { store: 'unavailable' } })).statusCode).toBe(404);
  } finally {
    await t.close();
  }
});
