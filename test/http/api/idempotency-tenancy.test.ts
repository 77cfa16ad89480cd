/**
 * Idempotency-Key on writes (DESIGN §3), tenant isolation and roles (DESIGN §6).
 */
import { describe, expect, it } from 'vitest';
import { auth, checkpointBody, type Who, useTestApp } from '../../support/app.js';

type Json = Record<string, unknown>;

const testApp = useTestApp();

function post(body: Json, who: Who = 'writer', headers: Record<string, string> = {}) {
  return testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(who), ...headers }, payload: body });
}

function get(url: string, who: Who = 'writer', headers: Record<string, string> = {}) {
  return testApp().app.inject({ method: 'GET', url, headers: { ...auth(who), ...headers } });
}

function patch(id: unknown, body: Json, ifMatch: string, who: Who = 'writer', headers: Record<string, string> = {}) {
  return testApp().app.inject({ method: 'PATCH', url: `/v1/checkpoints/${String(id)}`, headers: { ...auth(who), 'if-match': ifMatch, ...headers }, payload: body });
}

describe('Idempotency-Key', () => {
  it('replays the first answer to a retry with the same key and body, and creates one checkpoint', async () => {
    const body = checkpointBody('task-idem');
    const first = await post(body, 'writer', { 'idempotency-key': 'create-1' });
    const second = await post(body, 'writer', { 'idempotency-key': 'create-1' });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.json()).toEqual(first.json());
    expect(second.headers.location).toBe(first.headers.location);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(second.headers['idempotent-replayed']).toBe('true');
    const history = (await get('/v1/tasks/task-idem/checkpoints')).json() as { items: Json[] };
    expect(history.items).toHaveLength(1);
    const audit = (await get('/v1/tasks/task-idem/audit')).json() as { items: Json[] };
    expect(audit.items).toHaveLength(1);
  });

  it('refuses the same key with another body: 422 idempotency_key_reused, nothing created', async () => {
    expect((await post(checkpointBody('task-reuse'), 'writer', { 'idempotency-key': 'k-reuse' })).statusCode).toBe(201);
    const other = await post(checkpointBody('task-reuse', { agentId: 'agent-2' }), 'writer', { 'idempotency-key': 'k-reuse' });
    expect(other.statusCode).toBe(422);
    expect(String(other.headers['content-type'])).toMatch(/^application\/problem\+json/);
    expect(other.json()).toMatchObject({ code: 'idempotency_key_reused' });
    expect(((await get('/v1/tasks/task-reuse/checkpoints')).json() as { items: Json[] }).items).toHaveLength(1);
  });

  it('keeps keys per tenant: another tenant using the same key gets its own checkpoint', async () => {
    const body = checkpointBody('task-shared-key');
    const ours = await post(body, 'writer', { 'idempotency-key': 'same-key' });
    const theirs = await post(body, 'acmeWriter', { 'idempotency-key': 'same-key' });
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect((theirs.json() as Json).id).not.toBe((ours.json() as Json).id);
    expect((await get(`/v1/checkpoints/${String((theirs.json() as Json).id)}`, 'acmeWriter')).statusCode).toBe(200);
  });

  it('replays a PATCH retried after another change with its first answer', async () => {
    const cp = (await post(checkpointBody('task-idem-patch'))).json() as Json;
    const first = await patch(cp.id, { labels: { step: 'one' } }, '"1"', 'writer', { 'idempotency-key': 'patch-1' });
    expect(first.statusCode).toBe(200);
    expect((await patch(cp.id, { labels: { step: 'two' } }, '"2"')).statusCode).toBe(200);
    const retry = await patch(cp.id, { labels: { step: 'one' } }, '"1"', 'writer', { 'idempotency-key': 'patch-1' });
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
    expect(retry.headers.etag).toBe('"2"');
    const now = (await get(`/v1/checkpoints/${String(cp.id)}`)).json() as Json;
    expect(now).toMatchObject({ version: 3, labels: { step: 'two' } });
  });

  it('replays a retried finalize and a retried link instead of refusing them', async () => {
    const parent = (await post(checkpointBody('task-idem-fin'))).json() as Json;
    const child = (await post(checkpointBody('task-idem-fin'))).json() as Json;
    const linkOnce = () =>
      testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(parent.id)}/links`, headers: { ...auth(), 'idempotency-key': 'link-1' }, payload: { childId: child.id } });
    const firstLink = await linkOnce();
    const againLink = await linkOnce();
    expect(firstLink.statusCode).toBe(201);
    expect(againLink.statusCode).toBe(201);
    expect(againLink.headers['idempotent-replayed']).toBe('true');
    expect(againLink.json()).toEqual(firstLink.json());

    const finalizeOnce = () =>
      testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(parent.id)}/finalize`, headers: { ...auth(), 'idempotency-key': 'fin-1' }, payload: { status: 'completed' } });
    const first = await finalizeOnce();
    const again = await finalizeOnce();
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    // Without the key, a second finalization is refused.
    const other = await testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(parent.id)}/finalize`, headers: auth(), payload: { status: 'completed' } });
    expect(other.statusCode).toBe(409);
    expect(((await get('/v1/tasks/task-idem-fin/audit')).json() as { items: Json[] }).items).toHaveLength(4);
  });

  it('applies concurrent requests with the same key once', async () => {
    const body = checkpointBody('task-idem-race');
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(body, 'writer', { 'idempotency-key': 'race-1' })));
    expect(answers.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((r) => (r.json() as Json).id)).size).toBe(1);
    expect(answers.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(4);
    expect(((await get('/v1/tasks/task-idem-race/checkpoints')).json() as { items: Json[] }).items).toHaveLength(1);
  });

  it('applies a keyed write whose first attempt raced other writers when it is retried', async () => {
    const cp = (await post(checkpointBody('task-idem-storm'))).json() as Json;
    const finalizeKeyed = () =>
      testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(cp.id)}/finalize`, headers: { ...auth(), 'idempotency-key': 'fin-storm' }, payload: { status: 'completed' } });
    const storm = Array.from({ length: 10 }, (_, i) => patch(cp.id, { labels: { [`k${i}`]: 'v' } }, '*'));
    await Promise.all([...storm, finalizeKeyed()]);
    // Whatever the first attempt answered, a retry with the same key must end with the checkpoint finalized.
    const retry = await finalizeKeyed();
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json()).toMatchObject({ status: 'finalized', finalStatus: 'completed' });
    expect((await get(`/v1/checkpoints/${String(cp.id)}`)).json()).toMatchObject({ status: 'finalized' });
  });

  it('refuses a malformed key with 400', async () => {
    const res = await post(checkpointBody('task-bad-key'), 'writer', { 'idempotency-key': 'x'.repeat(300) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'validation_failed' });
  });
});

describe('tenancy', () => {
  it("hides one tenant's checkpoints from another, both ways", async () => {
    const acme = (await post(checkpointBody('task-acme'), 'acmeWriter')).json() as Json;
    const ours = (await post(checkpointBody('task-default'), 'writer')).json() as Json;

    const cases: [Who, Json, string][] = [
      ['writer', acme, 'task-acme'],
      ['acmeWriter', ours, 'task-default'],
    ];
    for (const [who, foreign, task] of cases) {
      for (const url of [
        `/v1/checkpoints/${String(foreign.id)}`,
        `/v1/checkpoints/${String(foreign.id)}/revisions`,
        `/v1/checkpoints/${String(foreign.id)}/lineage`,
        `/v1/tasks/${task}/checkpoints`,
        `/v1/tasks/${task}/checkpoints/latest`,
        `/v1/tasks/${task}/audit`,
        `/v1/tasks/${task}/audit/verify`,
      ]) {
        const res = await get(url, who);
        expect(res.statusCode, `${who} ${url}`).toBe(404);
        expect(res.json()).toMatchObject({ code: 'not_found' });
      }
      const patched = await patch(foreign.id, { labels: { x: 'y' } }, '"1"', who);
      expect(patched.statusCode).toBe(404);
      const finalized = await testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(foreign.id)}/finalize`, headers: auth(who), payload: { status: 'completed' } });
      expect(finalized.statusCode).toBe(404);

      const search = (await get(`/v1/checkpoints?taskId=${task}`, who)).json() as { items: Json[] };
      expect(search.items).toEqual([]);
      const all = (await get('/v1/checkpoints', who)).json() as { items: Json[] };
      expect(all.items.map((c) => c.id)).not.toContain(foreign.id);
      const events = (await get('/v1/events', who)).json() as { items: Json[] };
      expect(events.items.map((e) => e.subject)).not.toContain(foreign.id);
      expect(events.items).toHaveLength(1);
    }
    // The owners still see theirs, unchanged.
    expect((await get(`/v1/checkpoints/${String(acme.id)}`, 'acmeWriter')).json()).toMatchObject({ version: 1, status: 'active' });
    expect((await get(`/v1/checkpoints/${String(ours.id)}`, 'writer')).json()).toMatchObject({ version: 1, status: 'active' });
  });

  it("cannot link to another tenant's checkpoint", async () => {
    const acme = (await post(checkpointBody('task-acme'), 'acmeWriter')).json() as Json;
    const ours = (await post(checkpointBody('task-default'), 'writer')).json() as Json;
    const link = await testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(acme.id)}/links`, headers: auth('writer'), payload: { childId: ours.id } });
    expect(link.statusCode).toBe(404);
    const born = await post(checkpointBody('task-default', { parentId: acme.id }), 'writer');
    expect(born.statusCode).toBe(400);
  });
});

describe('roles and authentication', () => {
  it('lets an auditor read, search and audit, but not write', async () => {
    const cp = (await post(checkpointBody('task-roles'))).json() as Json;
    for (const url of [`/v1/checkpoints/${String(cp.id)}`, '/v1/checkpoints?taskId=task-roles', '/v1/tasks/task-roles/audit', '/v1/tasks/task-roles/audit/verify', '/v1/events']) {
      expect((await get(url, 'auditor')).statusCode, url).toBe(200);
    }
    const create = await post(checkpointBody('task-roles'), 'auditor');
    expect(create.statusCode).toBe(403);
    expect(create.json()).toMatchObject({ code: 'forbidden' });
    expect((await patch(cp.id, { labels: { a: 'b' } }, '"1"', 'auditor')).statusCode).toBe(403);
    const fin = await testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(cp.id)}/finalize`, headers: auth('auditor'), payload: { status: 'completed' } });
    expect(fin.statusCode).toBe(403);
    expect((await get(`/v1/checkpoints/${String(cp.id)}`)).json()).toMatchObject({ version: 1, status: 'active' });
  });

  it('answers 401 without a token or with an unknown one', async () => {
    const none = await testApp().app.inject({ method: 'GET', url: '/v1/checkpoints' });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ code: 'unauthorized' });
    const wrong = await testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: { authorization: 'Bearer not-a-token' }, payload: checkpointBody('task-x') });
    expect(wrong.statusCode).toBe(401);
    expect((await get('/v1/tasks/task-x/checkpoints')).statusCode).toBe(404);
  });
});
