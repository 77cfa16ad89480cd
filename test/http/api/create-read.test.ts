/**
 * POST /v1/checkpoints and GET /v1/checkpoints/:id (DESIGN §2, §3): what is
 * created, how it is hashed, how it is read back, and how bad input is refused.
 */
import { describe, expect, it } from 'vitest';
import { jcs, sha256 } from '../../domain/hash/harness.js';
import { auth, checkpointBody, useTestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';

const testApp = useTestApp();

async function create(body: Json) {
  return testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth('writer'), payload: body });
}

/**
 * SHA-256 of the RFC 8785 form of the checkpoint without compliance.hash and
 * compliance.signature, with the test suite's own RFC 8785 serialiser: the
 * `canonicalize` package src uses would share any bug it has with the code under test.
 */
function expectedHash(checkpoint: Json): string {
  const { hash: _hash, signature: _signature, ...compliance } = checkpoint.compliance as Json;
  return sha256(jcs({ ...checkpoint, compliance }));
}

function fields(body: Json): string[] {
  return ((body.errors ?? []) as { field: string }[]).map((e) => e.field);
}

describe('POST /v1/checkpoints', () => {
  it('creates a checkpoint: 201, ETag "1", Location and the service-set fields', async () => {
    const res = await create(checkpointBody('task-create'));
    expect(res.statusCode).toBe(201);
    expect(res.headers.etag).toBe('"1"');
    const cp = res.json() as Json;
    expect(res.headers.location).toBe(`/v1/checkpoints/${cp.id}`);
    expect(cp.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(cp).toMatchObject({
      taskId: 'task-create',
      agentId: 'agent-1',
      agentType: 'implementation',
      schemaVersion: '1.0',
      status: 'active',
      version: 1,
      labels: { team: 'core' },
      executionState: { phase: 'implementing', currentFocus: 'p1' },
    });
    expect(cp.finalStatus).toBeUndefined();
    expect(Number.isNaN(Date.parse(String(cp.createdAt)))).toBe(false);
    expect(cp.updatedAt).toBe(cp.createdAt);
  });

  it('sets compliance.hash to the SHA-256 of the RFC 8785 canonical checkpoint without hash and signature', async () => {
    const res = await create(checkpointBody('task-hash', { labels: { b: 1, a: 'x', z: true }, extensions: { unicode: 'é€𝄞', n: 1.5e-7 } }));
    const cp = res.json() as Json;
    const hash = (cp.compliance as Json).hash;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(expectedHash(cp));
    // And the read returns the same document, which still hashes the same.
    const read = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}`, headers: auth() });
    expect(read.json()).toEqual(cp);
    expect(expectedHash(read.json() as Json)).toBe(hash);
  });

  it('ids of consecutive checkpoints are distinct and time-ordered', async () => {
    const a = (await create(checkpointBody('task-ids'))).json() as Json;
    const b = (await create(checkpointBody('task-ids'))).json() as Json;
    expect(a.id).not.toBe(b.id);
    expect(String(a.id) < String(b.id)).toBe(true);
  });

  it('accepts items as strings and objects, and decisions as strings and objects', async () => {
    const body = checkpointBody('task-shapes', {
      executionState: {
        phase: 'testing',
        completedItems: ['plain string', { id: 'c1', description: 'object item', files: { created: ['a.ts'], modified: [{ path: 'b.ts', sha256: 'b'.repeat(64) }], deleted: ['c.ts'] }, at: '2025-01-02T03:04:05Z' }],
        pendingItems: ['next'],
        blockedItems: [{ description: 'waiting', blocker: 'API key' }],
      },
      contextSummary: { keyDecisions: ['a string decision', { decision: 'object decision', rationale: 'why', at: '2025-01-02T03:04:05.000Z', by: 'agent-1' }] },
    });
    const res = await create(body);
    expect(res.statusCode).toBe(201);
    const cp = res.json() as Json;
    expect(cp.executionState).toEqual(body.executionState);
    expect(cp.contextSummary).toEqual(body.contextSummary);
  });

  it('lists every invalid field in one 400', async () => {
    const res = await create({
      taskId: '',
      agentId: 'agent-1',
      iteration: 'three',
      executionState: { phase: 'dreaming', completedItems: [{ nodescription: true }] },
      metrics: { tokensConsumed: -1 },
    });
    const body = expectProblem(res, 400, 'validation_failed');
    const named = fields(body);
    expect(named).toEqual(expect.arrayContaining(['taskId', 'iteration', 'executionState.phase', 'metrics.tokensConsumed']));
    expect(named.some((f) => f.startsWith('executionState.completedItems.0'))).toBe(true);
  });

  it('names a missing required field', async () => {
    const res = await create({ taskId: 'task-x' });
    expect(fields(expectProblem(res, 400, 'validation_failed'))).toContain('agentId');
  });

  it('refuses an unknown top-level field and names it', async () => {
    const res = await create(checkpointBody('task-unknown', { colour: 'blue' }));
    expect(fields(expectProblem(res, 400, 'validation_failed'))).toContain('colour');
  });

  it('refuses a body that is not JSON', async () => {
    const res = await testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), 'content-type': 'application/json' }, payload: '{"taskId":' });
    expectProblem(res, 400, 'validation_failed');
  });

  it('stores nothing when the body is refused', async () => {
    await create({ taskId: 'task-refused', agentId: 'a', executionState: { phase: 'nope' } });
    const history = await testApp().app.inject({ method: 'GET', url: '/v1/tasks/task-refused/checkpoints', headers: auth() });
    expect(history.statusCode).toBe(404);
  });
});

describe('GET /v1/checkpoints/:id', () => {
  it('returns the checkpoint with its ETag', async () => {
    const created = await create(checkpointBody('task-get'));
    const cp = created.json() as Json;
    const res = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}`, headers: auth() });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"1"');
    expect(res.json()).toEqual(cp);
  });

  it('returns an earlier version with ?version=N after a change', async () => {
    const cp = (await create(checkpointBody('task-version'))).json() as Json;
    const patch = await testApp().app.inject({
      method: 'PATCH',
      url: `/v1/checkpoints/${cp.id}`,
      headers: { ...auth(), 'if-match': '"1"', 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ labels: { team: 'platform' } }),
    });
    expect(patch.statusCode).toBe(200);
    const v1 = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}?version=1`, headers: auth() });
    expect(v1.statusCode).toBe(200);
    expect(v1.json()).toEqual(cp);
    expect(v1.headers.etag).toBe('"1"');
    const current = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}`, headers: auth() });
    expect(current.json()).toMatchObject({ version: 2, labels: { team: 'platform' } });
    expect(current.headers.etag).toBe('"2"');
    const v2 = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}?version=2`, headers: auth() });
    expect(v2.json()).toEqual(current.json());
  });

  it('answers 404 not_found for a version that never existed', async () => {
    const cp = (await create(checkpointBody('task-noversion'))).json() as Json;
    const res = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}?version=7`, headers: auth() });
    expectProblem(res, 404, 'not_found');
  });

  it('answers 404 not_found (problem+json) for an unknown id', async () => {
    const res = await testApp().app.inject({ method: 'GET', url: '/v1/checkpoints/0190f5c2-0000-7000-8000-000000000000', headers: auth() });
    expectProblem(res, 404, 'not_found');
  });

  it('answers 400 validation_failed naming params.id for a malformed id', async () => {
    const res = await testApp().app.inject({ method: 'GET', url: '/v1/checkpoints/not-a-uuid', headers: auth() });
    expect(fields(expectProblem(res, 400, 'validation_failed'))).toContain('params.id');
  });

  it('answers 304 to If-None-Match with the current ETag, and 200 once it is stale', async () => {
    const cp = (await create(checkpointBody('task-304'))).json() as Json;
    const fresh = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}`, headers: { ...auth(), 'if-none-match': '"1"' } });
    expect(fresh.statusCode).toBe(304);
    expect(fresh.body).toBe('');
    expect(fresh.headers.etag).toBe('"1"');
    await testApp().app.inject({
      method: 'PATCH',
      url: `/v1/checkpoints/${cp.id}`,
      headers: { ...auth(), 'if-match': '"1"' },
      payload: { labels: { x: 'y' } },
    });
    const stale = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}`, headers: { ...auth(), 'if-none-match': '"1"' } });
    expect(stale.statusCode).toBe(200);
    expect(stale.headers.etag).toBe('"2"');
  });

  it('answers 304 to a weak ETag, a list that holds the current ETag, and *', async () => {
    const cp = (await create(checkpointBody('task-304-forms'))).json() as Json;
    for (const header of ['W/"1"', '"0", "1"', '*']) {
      const res = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}`, headers: { ...auth(), 'if-none-match': header } });
      expect(res.statusCode, header).toBe(304);
    }
    const other = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${cp.id}`, headers: { ...auth(), 'if-none-match': '"0", W/"2"' } });
    expect(other.statusCode).toBe(200);
  });
});
