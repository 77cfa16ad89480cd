/**
 * Error codes that only a particular state of the service produces, each
 * reached through real requests on the real app and a real LMDB store:
 * `not_acceptable` (406) from an Accept a read cannot meet, the generic
 * `conflict` (409), and `store_unavailable` (503) with the store closed.
 */
import { describe, expect, it } from 'vitest';
import { auth, checkpointBody, useTestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';

// The write queue is off here: with it on, a write while the store is down is queued (202), see test/http/queue/.
const testApp = useTestApp({ config: { queueMaxBytes: 0 } });

async function create(taskId: string): Promise<Json> {
  const res = await testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId) });
  expect(res.statusCode).toBe(201);
  return res.json() as Json;
}

function get(url: string, accept?: string) {
  return testApp().app.inject({ method: 'GET', url, headers: { ...auth(), ...(accept === undefined ? {} : { accept }) } });
}

describe('406 not_acceptable', () => {
  it('refuses a read whose Accept admits none of what the route answers, naming what it has', async () => {
    const cp = await create('task-406');
    for (const accept of ['application/xml', 'text/html, text/plain', 'application/json;q=0', 'application/json;q=0, */*', 'text/*']) {
      const res = await get(`/v1/checkpoints/${String(cp.id)}`, accept);
      const problem = expectProblem(res, 406, 'not_acceptable');
      expect(problem.available, accept).toBe('application/json');
      // The refused representation's metadata does not leak onto the problem.
      expect(res.headers.etag, accept).toBeUndefined();
    }
    // A route that offers a second type for its own Accept value (audit as NDJSON) still refuses one it has not.
    expectProblem(await get('/v1/tasks/task-406/audit', 'application/xml'), 406, 'not_acceptable');
  });

  it('answers when Accept admits the type, by name, wildcard or preference, or is absent', async () => {
    const cp = await create('task-406-ok');
    for (const accept of [undefined, 'application/json', 'application/*', '*/*', 'application/xml, application/json;q=0.1', 'application/xml;q=1, */*;q=0.01', 'nonsense']) {
      const res = await get(`/v1/checkpoints/${String(cp.id)}`, accept);
      expect(res.statusCode, String(accept)).toBe(200);
      expect(res.headers.etag).toBe('"1"');
    }
  });

  it('does not refuse a write for its Accept: the change is made before the answer exists', async () => {
    const res = await testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), accept: 'application/xml' }, payload: checkpointBody('task-406-write') });
    expect(res.statusCode).toBe(201);
  });
});

describe('409 conflict', () => {
  it('refuses to set the state of a task its circuit breaker blocked', async () => {
    await create('task-409');
    const started = await testApp().app.inject({
      method: 'POST',
      url: '/v1/tasks/task-409/recoveries',
      headers: auth(),
      payload: { reason: 'the agent crashed', failure: { kind: 'crash', recoverable: false } },
    });
    expect(started.statusCode).toBe(201);
    expect(started.json()).toMatchObject({ recovery: { status: 'blocked' } });
    const res = await testApp().app.inject({ method: 'PUT', url: '/v1/tasks/task-409/state', headers: auth(), payload: { state: 'working' } });
    expectProblem(res, 409, 'conflict');
  });
});

describe('503 store_unavailable', () => {
  it('answers reads and writes with 503 and Retry-After once the LMDB store is closed, and readiness says so', async () => {
    const cp = await create('task-503');
    await testApp().store.close();
    const write = await testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('task-503') });
    expectProblem(write, 503, 'store_unavailable');
    expect(write.headers['retry-after']).toBe('1');
    // Nothing about the store's internals reaches the caller.
    expect(write.body).not.toMatch(/closed|lmdb/i);
    const read = await get(`/v1/checkpoints/${String(cp.id)}`);
    expectProblem(read, 503, 'store_unavailable');
    expect(read.headers['retry-after']).toBe('1');
    const ready = await testApp().app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
  });
});
