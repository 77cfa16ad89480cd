/**
 * `DELETE /v1/tasks/:taskId` (DESIGN §3, §4): a task's checkpoints go with
 * everything that finds them, the audit chain stays and verifies with a
 * tombstone, retention and legal hold refuse the purge, and only admins (or
 * writers where the deployment allows it) may purge.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeValue, encodeValue, tenantKeyspace } from '../../../src/store/keyspace.js';
import { decompress } from '../../../src/service/repository/compression.js';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../../support/app.js';

type Json = Record<string, unknown>;

let t: TestApp;
let clock: Date;
beforeEach(async () => {
  clock = new Date('2025-03-01T10:00:00.000Z');
  t = await buildTestApp({ app: { now: () => new Date(clock) } });
});
afterEach(async () => {
  await t.close();
});

async function create(taskId: string, extra: Json = {}): Promise<Json> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, extra) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as Json;
}

const get = (url: string, who: 'writer' | 'auditor' | 'admin' = 'writer') => t.app.inject({ method: 'GET', url, headers: auth(who) });
const purge = (taskId: string, who: 'writer' | 'auditor' | 'admin' = 'admin') => t.app.inject({ method: 'DELETE', url: `/v1/tasks/${taskId}`, headers: auth(who) });

describe('DELETE /v1/tasks/:taskId', () => {
  it('removes every checkpoint, its revisions, lineage and index entries; other tasks stay', async () => {
    const first = await create('t-purge', { labels: { kind: 'x' } });
    const second = await create('t-purge', { parentId: first.id, labels: { kind: 'x' } });
    const patched = await t.app.inject({ method: 'PATCH', url: `/v1/checkpoints/${second.id}`, headers: { ...auth(), 'if-match': '"1"' }, payload: { labels: { kind: 'y' } } });
    expect(patched.statusCode).toBe(200);
    const other = await create('t-other', { labels: { kind: 'x' } });

    const res = await purge('t-purge');
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');

    for (const id of [first.id, second.id]) expect((await get(`/v1/checkpoints/${id}`)).statusCode).toBe(404);
    expect((await get(`/v1/checkpoints/${second.id}?version=1`)).statusCode).toBe(404);
    expect((await get('/v1/tasks/t-purge/checkpoints')).json().items).toEqual([]);
    expect((await get('/v1/tasks/t-purge/checkpoints/latest')).statusCode).toBe(404);
    const found = (await get('/v1/checkpoints?label.kind=x')).json().items.map((c: Json) => c.id);
    expect(found).toEqual([other.id]);
    expect((await get('/v1/checkpoints?label.kind=y')).json().items).toEqual([]);
    expect((await get(`/v1/checkpoints/${other.id}`)).statusCode).toBe(200);
  });

  it('keeps the audit chain with a tombstone entry, and it still verifies', async () => {
    await create('t-tomb');
    await create('t-tomb');
    expect((await purge('t-tomb')).statusCode).toBe(204);
    const audit = (await get('/v1/tasks/t-tomb/audit', 'auditor')).json() as { items: Json[] };
    const last = audit.items[audit.items.length - 1]!;
    expect(last.action).toBe('task.purged');
    expect(last.details).toEqual({ checkpoints: 2 });
    expect((await get('/v1/tasks/t-tomb/audit/verify', 'auditor')).json()).toMatchObject({ ok: true, entries: 3 });
  });

  it('lets the task be written again after a purge, the chain going on', async () => {
    await create('t-again');
    expect((await purge('t-again')).statusCode).toBe(204);
    const next = await create('t-again');
    expect((await get('/v1/tasks/t-again/checkpoints/latest')).json().id).toBe(next.id);
    expect((await get('/v1/tasks/t-again/audit/verify', 'auditor')).json()).toMatchObject({ ok: true, entries: 3 });
  });

  it('refuses with 409 retention_active under an unexpired retention period, and purges once it has run out', async () => {
    await create('t-keep', { compliance: { retentionPolicy: 'P30D' } });
    const refused = await purge('t-keep');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('retention_active');
    expect((await get('/v1/tasks/t-keep/checkpoints')).json().items).toHaveLength(1);
    clock = new Date('2025-04-01T10:00:00.000Z');
    expect((await purge('t-keep')).statusCode).toBe(204);
  });

  it('refuses with 409 retention_active while a legal hold applies, whatever the retention', async () => {
    await create('t-hold', { compliance: { legalHold: true } });
    clock = new Date('2035-01-01T00:00:00.000Z');
    const refused = await purge('t-hold');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('retention_active');
  });

  it('answers 404 for a task never written, and the same 204 to a retry with the same Idempotency-Key', async () => {
    expect((await purge('t-none')).statusCode).toBe(404);
    await create('t-retry');
    const headers = { ...auth('admin'), 'idempotency-key': 'purge-retry-1' };
    const first = await t.app.inject({ method: 'DELETE', url: '/v1/tasks/t-retry', headers });
    const again = await t.app.inject({ method: 'DELETE', url: '/v1/tasks/t-retry', headers });
    expect([first.statusCode, again.statusCode]).toEqual([204, 204]);
    const audit = (await get('/v1/tasks/t-retry/audit', 'auditor')).json() as { items: Json[] };
    expect(audit.items.filter((e) => e.action === 'task.purged')).toHaveLength(1);
  });

  it('is for admins; writers only where BATON_WRITER_PURGE=1; never auditors', async () => {
    await create('t-role');
    expect((await purge('t-role', 'writer')).statusCode).toBe(403);
    expect((await purge('t-role', 'auditor')).statusCode).toBe(403);
    await t.close();
    t = await buildTestApp({ config: { writerPurge: '1' }, app: { now: () => new Date(clock) } });
    await create('t-role');
    expect((await purge('t-role', 'writer')).statusCode).toBe(204);
    expect((await purge('t-role', 'auditor')).statusCode).toBe(403);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    expect(doc.paths['/v1/tasks/{taskId}']?.delete).toMatchObject({ tags: ['tasks'] });
  });
});

it('refuses to purge a task with a checkpoint it cannot parse (409 checkpoint_corrupted), and purges nothing', async () => {
  const t = await buildTestApp();
  try {
    const cp = (await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('t-broken') })).json() as Json;
    const key = tenantKeyspace('default').checkpoints.pack('t-broken', String(cp.id), 0);
    await t.store.transact(async (tx) => {
      const record = decodeValue<{ c: string; h: string }>(decompress(Buffer.from((await tx.get(key))!)));
      tx.set(key, encodeValue({ ...record, c: '{"compliance":{"legalHold":tr' }));
    });
    const res = await t.app.inject({ method: 'DELETE', url: '/v1/tasks/t-broken', headers: auth('admin') });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ code: 'checkpoint_corrupted', checkpointId: cp.id });
    expect((await t.app.inject({ method: 'GET', url: '/v1/tasks/t-broken/checkpoints', headers: auth() })).json()).toMatchObject({ corrupted: [cp.id] });
  } finally {
    await t.close();
  }
});
