/**
 * PATCH /v1/checkpoints/:id (DESIGN §3): JSON Merge Patch (RFC 7396) under
 * If-Match, read-only fields, finalized checkpoints, revisions, and races.
 */
import { describe, expect, it } from 'vitest';
import { auth, checkpointBody, useTestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';

const testApp = useTestApp();

async function create(taskId = 'task-patch', extra: Json = {}): Promise<Json> {
  const res = await testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, extra) });
  expect(res.statusCode).toBe(201);
  return res.json() as Json;
}

function patch(id: unknown, body: unknown, headers: Record<string, string> = { 'if-match': '"1"' }, contentType = 'application/merge-patch+json') {
  return testApp().app.inject({
    method: 'PATCH',
    url: `/v1/checkpoints/${String(id)}`,
    headers: { ...auth(), 'content-type': contentType, ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function read(id: unknown): Promise<Json> {
  const res = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${String(id)}`, headers: auth() });
  expect(res.statusCode).toBe(200);
  return res.json() as Json;
}

describe('merge patch semantics', () => {
  it('deletes a label with null, merges nested objects keeping siblings, replaces arrays; version +1 and ETag', async () => {
    const cp = await create('task-merge', { labels: { team: 'core', owner: 'ana' } });
    const res = await patch(cp.id, {
      labels: { team: null, stage: 'beta' },
      executionState: { currentFocus: 'p2', pendingItems: ['only this'] },
      metrics: { testsStatus: { passed: 3 } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"2"');
    const after = res.json() as Json;
    expect(after.version).toBe(2);
    expect(after.labels).toEqual({ owner: 'ana', stage: 'beta' });
    const state = after.executionState as Json;
    expect(state.currentFocus).toBe('p2');
    expect(state.phase).toBe('implementing');
    expect(state.completedItems).toEqual((cp.executionState as Json).completedItems);
    expect(state.pendingItems).toEqual(['only this']);
    expect(after.metrics).toMatchObject({ tokensConsumed: 1200, filesModified: ['src/parser.ts'], testsStatus: { passed: 3 } });
    expect(String(after.updatedAt) >= String(cp.updatedAt)).toBe(true);
    expect(after.createdAt).toBe(cp.createdAt);
    expect((after.compliance as Json).hash).not.toBe((cp.compliance as Json).hash);
    expect(await read(cp.id)).toEqual(after);
  });

  it('accepts application/json as well as application/merge-patch+json', async () => {
    const cp = await create();
    expect((await patch(cp.id, { labels: { a: '1' } }, { 'if-match': '"1"' }, 'application/json')).statusCode).toBe(200);
    expect((await patch(cp.id, { labels: { b: '2' } }, { 'if-match': '"2"' }, 'application/merge-patch+json')).statusCode).toBe(200);
    expect((await read(cp.id)).labels).toEqual({ team: 'core', a: '1', b: '2' });
  });

  it('refuses text/plain with 415 unsupported_media_type', async () => {
    const cp = await create();
    expectProblem(await patch(cp.id, '{"labels":{"a":"1"}}', { 'if-match': '"1"' }, 'text/plain'), 415, 'unsupported_media_type');
    expect((await read(cp.id)).version).toBe(1);
  });

  it('refuses a patch that makes the checkpoint invalid, naming the field', async () => {
    const cp = await create();
    const body = expectProblem(await patch(cp.id, { executionState: { phase: 'sleeping' } }), 400, 'validation_failed');
    expect((body.errors as { field: string }[]).map((e) => e.field)).toContain('executionState.phase');
    expect((await read(cp.id)).version).toBe(1);
  });

  it('refuses a body that is not a JSON object with 400', async () => {
    const cp = await create();
    for (const body of ['[]', '"text"', 'null']) {
      expectProblem(await patch(cp.id, body), 400, 'validation_failed');
    }
    expect((await read(cp.id)).version).toBe(1);
  });
});

describe('If-Match', () => {
  it('requires If-Match: none → 428 precondition_required', async () => {
    const cp = await create();
    expectProblem(await patch(cp.id, { labels: { a: '1' } }, {}), 428, 'precondition_required');
    expect((await read(cp.id)).version).toBe(1);
  });

  it('refuses a stale version with 412 version_conflict', async () => {
    const cp = await create();
    expect((await patch(cp.id, { labels: { a: '1' } })).statusCode).toBe(200);
    expectProblem(await patch(cp.id, { labels: { a: '2' } }, { 'if-match': '"1"' }), 412, 'version_conflict');
    const now = await read(cp.id);
    expect(now.version).toBe(2);
    expect((now.labels as Json).a).toBe('1');
  });

  it('accepts If-Match: *', async () => {
    const cp = await create();
    await patch(cp.id, { labels: { a: '1' } });
    const res = await patch(cp.id, { labels: { a: '2' } }, { 'if-match': '*' });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"3"');
  });

  it('refuses a malformed If-Match with 400 naming headers.if-match', async () => {
    const cp = await create();
    const body = expectProblem(await patch(cp.id, { labels: { a: '1' } }, { 'if-match': 'version-one' }), 400, 'validation_failed');
    expect((body.errors as { field: string }[]).map((e) => e.field)).toContain('headers.if-match');
  });

  it('answers 404 for an unknown checkpoint', async () => {
    expectProblem(await patch('0190f5c2-0000-7000-8000-000000000000', { labels: { a: '1' } }), 404, 'not_found');
  });

  it('lets exactly one of 20 concurrent PATCHes with If-Match "1" win; the others get 412', async () => {
    const cp = await create();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => patch(cp.id, { labels: { writer: `w${i}` } })));
    const codes = answers.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 200)).toHaveLength(1);
    expect(codes.filter((c) => c === 412)).toHaveLength(19);
    const winner = answers.find((r) => r.statusCode === 200)!.json() as Json;
    const now = await read(cp.id);
    expect(now.version).toBe(2);
    expect(now.labels).toEqual(winner.labels);
  });

  it('applies every one of 20 concurrent PATCHes with If-Match: * (none is lost or refused)', async () => {
    const cp = await create();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => patch(cp.id, { labels: { [`k${i}`]: 'v' } }, { 'if-match': '*' })));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    expect(answers.map((r) => (r.json() as Json).version).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    const now = await read(cp.id);
    expect(now.version).toBe(21);
    expect(Object.keys(now.labels as Json)).toHaveLength(21);
  });
});

describe('read-only fields', () => {
  it('refuses changes to id, taskId, version, createdAt, status and compliance.hash, naming each, and changes nothing', async () => {
    const cp = await create();
    const hash = (cp.compliance as Json).hash;
    const res = await patch(cp.id, {
      id: '0190f5c2-0000-7000-8000-000000000000',
      taskId: 'another-task',
      version: 9,
      createdAt: '2020-01-01T00:00:00.000Z',
      status: 'finalized',
      compliance: { hash: 'f'.repeat(64) },
      labels: { sneaky: 'yes' },
    });
    const body = expectProblem(res, 400, 'validation_failed');
    const named = (body.errors as { field: string }[]).map((e) => e.field);
    expect(named).toEqual(expect.arrayContaining(['id', 'taskId', 'version', 'createdAt', 'status', 'compliance.hash']));
    const after = await read(cp.id);
    expect(after.version).toBe(1);
    expect((after.compliance as Json).hash).toBe(hash);
    expect(after.labels).toEqual({ team: 'core' });
  });

  it('accepts the whole document sent back with the read-only fields unchanged', async () => {
    const cp = await create();
    const res = await patch(cp.id, { ...cp, labels: { team: 'core', round: 'trip' } });
    expect(res.statusCode).toBe(200);
    const after = res.json() as Json;
    expect(after).toMatchObject({ id: cp.id, taskId: cp.taskId, version: 2, createdAt: cp.createdAt, status: 'active', labels: { round: 'trip' } });
  });
});

describe('finalized checkpoints and revisions', () => {
  it('refuses to change a finalized checkpoint with 409 checkpoint_finalized', async () => {
    const cp = await create();
    const fin = await testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${cp.id}/finalize`, headers: auth(), payload: { status: 'completed' } });
    expect(fin.statusCode).toBe(200);
    expectProblem(await patch(cp.id, { labels: { a: '1' } }, { 'if-match': '"2"' }), 409, 'checkpoint_finalized');
    expectProblem(await patch(cp.id, { labels: { a: '1' } }, { 'if-match': '*' }), 409, 'checkpoint_finalized');
    expect((await read(cp.id)).version).toBe(2);
  });

  it('lists every version with its hash and updatedAt', async () => {
    const cp = await create();
    const v2 = (await patch(cp.id, { labels: { a: '1' } })).json() as Json;
    const v3 = (await patch(cp.id, { labels: { a: '2' } }, { 'if-match': '"2"' })).json() as Json;
    const res = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}/revisions`, headers: auth() });
    expect(res.statusCode).toBe(200);
    const items = (res.json() as { items: Json[] }).items;
    expect(items.map((i) => i.version)).toEqual([1, 2, 3]);
    expect(items.map((i) => i.hash)).toEqual([cp, v2, v3].map((c) => (c.compliance as Json).hash));
    expect(items.map((i) => i.updatedAt)).toEqual([cp, v2, v3].map((c) => c.updatedAt));
  });
});
