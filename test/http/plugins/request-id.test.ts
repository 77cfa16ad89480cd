import { afterEach, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, TOKENS, type TestApp } from './build-test-app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids', () => {
  let test: TestApp | undefined;
  afterEach(async () => {
    await test?.app.close();
    test = undefined;
  });

  it('echoes a safe incoming X-Request-Id, on success and on every kind of problem', async () => {
    test = await buildTestApp();
    const { app } = test;
    const headers = { 'x-request-id': 'agent-7.step_42' };
    const answers = await Promise.all([
      app.inject({ method: 'GET', url: '/test/whoami', headers: { ...headers, ...bearer(TOKENS.writer) } }),
      app.inject({ method: 'GET', url: '/test/whoami', headers }),
      app.inject({ method: 'GET', url: '/nowhere', headers }),
      app.inject({ method: 'GET', url: '/test/plain-error', headers: { ...headers, ...bearer(TOKENS.writer) } }),
    ]);
    expect(answers.map((res) => res.statusCode)).toEqual([200, 401, 404, 500]);
    for (const res of answers) expect(res.headers['x-request-id']).toBe('agent-7.step_42');
    expect(answers[1]!.json().requestId).toBe('agent-7.step_42');
  });

  it('mints a UUID when the incoming id is absent, too long or unsafe', async () => {
    test = await buildTestApp();
    for (const id of [undefined, 'x'.repeat(129), 'a b', 'id\u00e9', '']) {
      const res = await test.app.inject({ method: 'GET', url: '/healthz', headers: id === undefined ? {} : { 'x-request-id': id } });
      expect(res.headers['x-request-id']).toMatch(UUID);
    }
  });
});
