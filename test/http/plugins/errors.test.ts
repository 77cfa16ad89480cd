import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ERRORS } from '../../../src/errors.js';
import { fieldErrors } from '../../../src/http/plugins/errors.js';
import { bearer, buildTestApp, TOKENS, type TestApp } from './build-test-app.js';

const writer = bearer(TOKENS.writer);
const validBody = { taskId: 't-1', iteration: 0, executionState: { phase: 'planning', currentFocus: 'design' } };

describe('the error plugin', () => {
  let test: TestApp | undefined;
  afterEach(async () => {
    await test?.app.close();
    test = undefined;
  });

  async function build(overrides = {}): Promise<TestApp> {
    test = await buildTestApp(overrides);
    return test;
  }

  it('answers an AppError as an RFC 9457 problem with its status, code, detail and extra members', async () => {
    const { app } = await build();
    const res = await app.inject({ method: 'GET', url: '/test/app-error?x=1', headers: { ...writer, 'x-request-id': 'req-1' } });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toEqual({
      type: 'https://baton.dev/problems/checkpoint_finalized',
      title: ERRORS.checkpoint_finalized.title,
      status: 409,
      code: 'checkpoint_finalized',
      detail: `${ERRORS.checkpoint_finalized.message} It was finalized at 2025-01-01T00:00:00Z.`,
      instance: '/test/app-error?x=1',
      requestId: 'req-1',
      checkpointId: 'c-1',
    });
  });

  it('lists every offending body field, with its path and the zod message', async () => {
    const { app } = await build();
    const res = await app.inject({
      method: 'POST',
      url: '/test/checkpoints',
      headers: writer,
      payload: { taskId: '', iteration: -1, executionState: { phase: 'dreaming', currentFocus: 'x' } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const body = res.json();
    expect(body.code).toBe('validation_failed');
    expect(body.errors).toHaveLength(3);
    expect(body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['executionState.phase', 'iteration', 'taskId']);
    for (const error of body.errors) expect(error.message).toEqual(expect.any(String));
  });

  it('prefixes query and path fields with where they were found', async () => {
    const { app } = await build();
    const query = await app.inject({ method: 'GET', url: '/test/items?limit=5000', headers: writer });
    expect(query.statusCode).toBe(400);
    expect(query.json().errors).toEqual([{ field: 'query.limit', message: expect.any(String) }]);
    const params = await app.inject({ method: 'PATCH', url: '/test/checkpoints/not-a-uuid', headers: writer, payload: { labels: {} } });
    expect(params.statusCode).toBe(400);
    expect(params.json().errors).toEqual([{ field: 'params.id', message: expect.any(String) }]);
  });

  it('answers malformed or empty JSON with 400 validation_failed on the body, never a 500 or a stack', async () => {
    const { app } = await build();
    for (const payload of ['{"taskId": "t-1",', '']) {
      const res = await app.inject({ method: 'POST', url: '/test/checkpoints', headers: { ...writer, 'content-type': 'application/json' }, payload });
      expect(res.statusCode).toBe(400);
      const body = res.json();
      expect(body.code).toBe('validation_failed');
      expect(body.errors).toEqual([{ field: 'body', message: expect.stringMatching(/not valid JSON/) }]);
      expect(res.body).not.toMatch(/\bat \S+:\d+|SyntaxError|FST_/);
    }
  });

  it('answers a __proto__ or constructor.prototype key with 400 validation_failed saying it is refused for safety, not that the JSON is invalid', async () => {
    const { app } = await build();
    const refusedForSafety = 'The body has a __proto__ or constructor.prototype key, which is refused for safety; rename the key.';
    const cases: [string, string][] = [
      ['application/json', '{"taskId":"t-1","__proto__":{"isAdmin":true}}'],
      ['application/json', '{"taskId":"t-1","extensions":{"deep":{"__proto__":null}}}'],
      ['application/json', '{"taskId":"t-1","constructor":{"prototype":{"polluted":true}}}'],
      ['application/merge-patch+json', '{"labels":{"constructor":{"prototype":{"x":1}}}}'],
      // Spelled with escapes, in an array, and after a value that is refused for another reason: still the prototype key.
      ['application/json', '{"taskId":"t-1","\\u005f_pro\\u0074o__":{"x":1}}'],
      ['application/json', '{"taskId":"t-1","stepsDone":[{"text":"a"},{"__proto__":{"x":1}}]}'],
      ['application/json', '{"taskId":"t-1","extensions":{"list":[[{"constructor":{"prototype":{}}}]]}}'],
      ['application/json', '{"taskId":"t-1","summary":"\\ud800","extensions":{"__proto__":{}}}'],
    ];
    for (const [type, payload] of cases) {
      const method = type === 'application/json' ? 'POST' : 'PATCH';
      const url = method === 'POST' ? '/test/checkpoints' : '/test/checkpoints/0190a5b4-7c3e-7b1a-9c2d-4e5f6a7b8c9d';
      const res = await app.inject({ method, url, headers: { ...writer, 'content-type': type }, payload });
      expect(res.statusCode, payload).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.json(), payload).toMatchObject({ code: 'validation_failed', errors: [{ field: 'body', message: refusedForSafety }] });
    }
    // Malformed text that happens to hold such a key is still answered as not JSON: the fix there is the syntax.
    const broken = await app.inject({ method: 'POST', url: '/test/checkpoints', headers: { ...writer, 'content-type': 'application/json' }, payload: '{"__proto__":{"x":1}' });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().errors).toEqual([{ field: 'body', message: 'The body is not valid JSON.' }]);
    // A constructor key without a prototype member is ordinary data.
    const plain = await app.inject({ method: 'POST', url: '/test/checkpoints', headers: writer, payload: { ...validBody, labels: { constructor: 'x' } } });
    expect(plain.statusCode).toBe(201);
    // The words as text in a value are data too, and so is a body after a byte order mark (or two, as before).
    const quoted = await app.inject({ method: 'POST', url: '/test/checkpoints', headers: writer, payload: { ...validBody, labels: { note: '"__proto__": {"isAdmin": true}, "constructor": {"prototype": 1}' } } });
    expect(quoted.statusCode).toBe(201);
    for (const mark of ['\ufeff', '\ufeff\ufeff']) {
      const marked = await app.inject({ method: 'POST', url: '/test/checkpoints', headers: { ...writer, 'content-type': 'application/json' }, payload: Buffer.from(mark + JSON.stringify(validBody), 'utf8') });
      expect(marked.statusCode, JSON.stringify(mark)).toBe(201);
    }
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it('parses application/merge-patch+json like JSON, malformed bodies included', async () => {
    const { app } = await build();
    const url = '/test/checkpoints/0190a5b4-7c3e-7b1a-9c2d-4e5f6a7b8c9d';
    const ok = await app.inject({ method: 'PATCH', url, headers: { ...writer, 'content-type': 'application/merge-patch+json' }, payload: '{"labels":{"a":"b"}}' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().labels).toEqual({ a: 'b' });
    const bad = await app.inject({ method: 'PATCH', url, headers: { ...writer, 'content-type': 'application/merge-patch+json' }, payload: '{labels' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].field).toBe('body');
  });

  it('answers a body over the limit (twice the checkpoint limit, room for whitespace) with 413 payload_too_large', async () => {
    const { app, config } = await build({ maxCheckpointBytes: 2048 });
    const payload = JSON.stringify({ ...validBody, taskId: 'x'.repeat(2 * config.maxCheckpointBytes) });
    const res = await app.inject({ method: 'POST', url: '/test/checkpoints', headers: { ...writer, 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload_too_large', status: 413 });
    const fits = await app.inject({ method: 'POST', url: '/test/checkpoints', headers: writer, payload: validBody });
    expect(fits.statusCode).toBe(201);
  });

  it('answers text/plain on a JSON route with 415 unsupported_media_type', async () => {
    const { app } = await build();
    const res = await app.inject({ method: 'POST', url: '/test/checkpoints', headers: { ...writer, 'content-type': 'text/plain' }, payload: 'hello' });
    expect(res.statusCode).toBe(415);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json().code).toBe('unsupported_media_type');
  });

  it('answers an unexpected error with 500 internal_error and the table sentence, not the error message', async () => {
    const { app } = await build();
    const res = await app.inject({ method: 'GET', url: '/test/plain-error', headers: writer });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ code: 'internal_error', detail: ERRORS.internal_error.message });
    expect(res.body).not.toMatch(/hunter2|database|\bat /);
  });

  it('answers a transient StoreError with 503 store_unavailable and Retry-After, and counts it', async () => {
    const { app, metrics } = await build();
    const res = await app.inject({ method: 'GET', url: '/test/store-error', headers: writer });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toMatchObject({ code: 'store_unavailable', status: 503 });
    expect(res.body).not.toMatch(/10\.0\.0\.7|refused/);
    const counted = await metrics.storeErrors.get();
    // Every code's series exists from the start (at 0, for dashboards); this failure counted once, under its code.
    expect(counted.values.filter((v) => v.value > 0)).toEqual([expect.objectContaining({ labels: { code: 'unavailable' }, value: 1 })]);
  });

  it('answers an unknown route with a 404 route_not_found problem', async () => {
    const { app } = await build();
    const res = await app.inject({ method: 'GET', url: '/v1/nowhere' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ code: 'route_not_found', status: 404, instance: '/v1/nowhere' });
  });

  it('answers a malformed URL with a 400 problem', async () => {
    const { app } = await build();
    const res = await app.inject({ method: 'PATCH', url: '/test/checkpoints/%E0%A4%A', headers: writer, payload: { labels: {} } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'url', message: expect.any(String) }] });
  });

  it('logs 5xx at error with the error, and 4xx at info without it', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    });
    test = await buildTestApp({}, pino({ level: 'info' }, stream));
    await test.app.inject({ method: 'GET', url: '/test/plain-error', headers: writer });
    await test.app.inject({ method: 'GET', url: '/test/app-error', headers: writer });
    const failed = lines.find((line) => line.msg === 'request failed');
    expect(failed).toMatchObject({ level: 50, code: 'internal_error', err: { message: expect.stringMatching(/hunter2/) } });
    const rejected = lines.find((line) => line.msg === 'request rejected');
    expect(rejected).toMatchObject({ level: 30, code: 'checkpoint_finalized', status: 409 });
    expect(rejected).not.toHaveProperty('err');
  });

  it('names each unknown key, and the missing property of a JSON Schema issue, as its own field', () => {
    const issues = [
      { instancePath: '/executionState', keyword: 'unrecognized_keys', message: 'Unrecognized keys: "a", "b"', params: { keys: ['a', 'b'] } },
      { instancePath: '', keyword: 'required', message: 'must have required property', params: { missingProperty: 'taskId' } },
      { instancePath: '', message: 'Invalid input' },
    ];
    expect(fieldErrors(issues, 'body').map((error) => error.field)).toEqual(['executionState.a', 'executionState.b', 'taskId', 'body']);
    expect(fieldErrors(issues, 'headers').map((error) => error.field)).toEqual(['headers.executionState.a', 'headers.executionState.b', 'headers.taskId', 'headers']);
  });
});
