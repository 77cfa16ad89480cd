/**
 * Corrupted bytes in the store (DESIGN §3: "hash verified on every read";
 * latest skips corrupt checkpoints and reports them). The stored value is
 * changed directly through the store, as a disk fault or an intruder would.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { compress, decompress, isCompressed } from '../../../src/service/repository/compression.js';
import { decodeValue, encodeValue, tenantKeyspace } from '../../../src/store/keyspace.js';
import { auth, checkpointBody, useTestApp } from '../../support/app.js';

type Json = Record<string, unknown>;

const MARKER = 'TAMPERED-CONTENT-7f3a';

const testApp = useTestApp();

async function create(taskId: string): Promise<Json> {
  const res = await testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId) });
  expect(res.statusCode).toBe(201);
  return res.json() as Json;
}

function get(url: string) {
  return testApp().app.inject({ method: 'GET', url, headers: auth() });
}

function valueKey(cp: Json) {
  return tenantKeyspace('default').checkpoints.pack(String(cp.taskId), String(cp.id), 0);
}

/** Changes one character inside the stored canonical JSON (`c`) and writes the record back with its old hash. */
async function tamper(cp: Json): Promise<void> {
  await testApp().store.transact(async (tx) => {
    const bytes = await tx.get(valueKey(cp));
    expect(bytes).toBeDefined();
    const record = decodeValue<{ c: string; h: string }>(decompress(Buffer.from(bytes!)));
    expect(record.c).toContain('wrote the parser');
    tx.set(valueKey(cp), compress(encodeValue({ ...record, c: record.c.replace('wrote the parser', MARKER) })));
  });
}

/** Replaces the stored value with bytes that are not MessagePack at all. */
async function garble(cp: Json): Promise<void> {
  await testApp().store.transact(async (tx) => {
    expect(await tx.get(valueKey(cp))).toBeDefined();
    tx.set(valueKey(cp), Buffer.from([0xc1, 0xc1, 0xff, 0x00, 0x13, 0x37]));
  });
}

/** Flips bytes inside the DEFLATE data of a compressed record, leaving its head intact. */
async function crush(cp: Json): Promise<void> {
  await testApp().store.transact(async (tx) => {
    const bytes = Buffer.from((await tx.get(valueKey(cp)))!);
    expect(isCompressed(bytes)).toBe(true);
    for (let at = 7; at < bytes.length; at += 5) bytes[at] = bytes[at]! ^ 0x5a;
    tx.set(valueKey(cp), bytes);
  });
}

async function corruptionEvents(): Promise<Json[]> {
  const res = await get('/v1/events?types=CHECKPOINT_CORRUPTED');
  expect(res.statusCode).toBe(200);
  return (res.json() as { items: Json[] }).items;
}

function expectCorrupted(res: { statusCode: number; headers: Record<string, unknown>; body: string; json(): unknown }): void {
  expect(res.statusCode).toBe(409);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  expect(res.json()).toMatchObject({ code: 'checkpoint_corrupted', status: 409 });
  expect(res.body).not.toContain(MARKER);
  expect(res.body).not.toContain('wrote the parser');
  expect(res.body).not.toContain('Continue with p1.');
}

describe.each([
  ['a changed character in the content', tamper],
  ['bytes that are not MessagePack', garble],
  ['a damaged compressed block', crush],
])('a stored checkpoint corrupted by %s', (_name, corrupt) => {
  let older: Json;
  let newer: Json;
  beforeEach(async () => {
    older = await create('task-corrupt');
    newer = await create('task-corrupt');
    await corrupt(newer);
  });

  it('is withheld: GET answers 409 checkpoint_corrupted without the content', async () => {
    expectCorrupted(await get(`/v1/checkpoints/${String(newer.id)}`));
    expectCorrupted(await get(`/v1/checkpoints/${String(newer.id)}?version=1`));
    // The intact neighbour still reads.
    expect((await get(`/v1/checkpoints/${String(older.id)}`)).json()).toEqual(older);
  });

  it('is reported by one CHECKPOINT_CORRUPTED event, however often it is read', async () => {
    expect(await corruptionEvents()).toEqual([]);
    await get(`/v1/checkpoints/${String(newer.id)}`);
    await get(`/v1/checkpoints/${String(newer.id)}`);
    await get('/v1/tasks/task-corrupt/checkpoints/latest');
    await get('/v1/tasks/task-corrupt/checkpoints');
    const events = await corruptionEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ specversion: '1.0', type: 'CHECKPOINT_CORRUPTED', subject: newer.id });
    expect(JSON.stringify(events[0])).not.toContain(MARKER);
    // Reporting it is itself audited, and the task's chain still verifies.
    const verify = await get('/v1/tasks/task-corrupt/audit/verify');
    expect(verify.json()).toEqual({ ok: true, entries: 3 });
  });

  it('is skipped by latest, which returns the previous checkpoint and names the corrupt one', async () => {
    const res = await get('/v1/tasks/task-corrupt/checkpoints/latest');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(older);
    expect(String(res.headers['baton-skipped-corrupt'])).toContain(String(newer.id));
  });

  it('is left out of history and search, and named in corrupted', async () => {
    const history = await get('/v1/tasks/task-corrupt/checkpoints');
    expect(history.statusCode).toBe(200);
    const page = history.json() as { items: Json[]; corrupted?: string[] };
    expect(page.items.map((c) => c.id)).toEqual([older.id]);
    expect(page.corrupted).toEqual([newer.id]);
    expect(history.body).not.toContain(MARKER);

    const search = await get('/v1/checkpoints?taskId=task-corrupt');
    expect(search.statusCode).toBe(200);
    expect((search.json() as { items: Json[] }).items.map((c) => c.id)).toEqual([older.id]);
  });

  it('is caught after it was read intact: a checkpoint read before its bytes change is checked again', async () => {
    const intact = await create('task-corrupt');
    for (let i = 0; i < 2; i++) expect((await get(`/v1/checkpoints/${String(intact.id)}`)).json()).toEqual(intact);
    await corrupt(intact);
    expectCorrupted(await get(`/v1/checkpoints/${String(intact.id)}`));
    expect((await get('/v1/tasks/task-corrupt/checkpoints/latest')).json()).toEqual(older);
  });

  it('cannot be changed: PATCH and finalize answer 409 checkpoint_corrupted', async () => {
    const patched = await testApp().app.inject({
      method: 'PATCH',
      url: `/v1/checkpoints/${String(newer.id)}`,
      headers: { ...auth(), 'if-match': '"1"' },
      payload: { labels: { fixed: 'no' } },
    });
    expectCorrupted(patched);
    const finalized = await testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(newer.id)}/finalize`, headers: auth(), payload: { status: 'completed' } });
    expectCorrupted(finalized);
  });

  it('is marked unverified in revisions, without a server error', async () => {
    const res = await get(`/v1/checkpoints/${String(newer.id)}/revisions`);
    expect(res.statusCode).toBe(200);
    const items = (res.json() as { items: Json[] }).items;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ verified: false });
  });
});

describe('corruption of every checkpoint and of the current version only', () => {
  it('answers latest with 409 checkpoint_corrupted when no checkpoint of the task verifies', async () => {
    const only = await create('task-all-bad');
    await tamper(only);
    expectCorrupted(await get('/v1/tasks/task-all-bad/checkpoints/latest'));
  });

  it('still serves an earlier, intact version with ?version=N', async () => {
    const cp = await create('task-old-ok');
    const patched = await testApp().app.inject({
      method: 'PATCH',
      url: `/v1/checkpoints/${String(cp.id)}`,
      headers: { ...auth(), 'if-match': '"1"' },
      payload: { labels: { v: '2' } },
    });
    expect(patched.statusCode).toBe(200);
    await tamper(cp);
    expectCorrupted(await get(`/v1/checkpoints/${String(cp.id)}`));
    const v1 = await get(`/v1/checkpoints/${String(cp.id)}?version=1`);
    expect(v1.statusCode).toBe(200);
    expect(v1.json()).toEqual(cp);
  });
});

describe.each([
  ['a changed character in the content', tamper],
  ['bytes that are not MessagePack', garble],
  ['a damaged compressed block', crush],
])('a checkpoint read, then corrupted by %s', (_name, corrupt) => {
  it('is caught on the next read: records read lately are kept decoded only with the very bytes they came from', async () => {
    const cp = await create('task-read-then-corrupt');
    for (let i = 0; i < 2; i++) expect((await get(`/v1/checkpoints/${String(cp.id)}`)).statusCode).toBe(200);
    await corrupt(cp);
    expectCorrupted(await get(`/v1/checkpoints/${String(cp.id)}`));
  });
});
