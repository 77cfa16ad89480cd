/**
 * Readiness and liveness over a real socket (DESIGN §10), with the store made
 * unavailable through fault injection: `/readyz` stays 200 (`degraded`) while
 * the write queue can take writes, so a load balancer keeps writes flowing
 * into it, and answers 503 when there is no queue or it is full; `/livez`
 * answers 200 whatever the store does, without a token.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { auth, buildTestApp, checkpointBody, queueDrained, type TestApp } from '../support/app.js';
import { TEST_STORE } from '../support/store.js';

let current: TestApp | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

/** The real app with fault injection, listening on a free port; answers its base URL. */
async function listening(config: Partial<Config> = {}): Promise<{ t: TestApp; base: string }> {
  current = await buildTestApp({ config: { queueReplayMs: 20, ...config }, app: { faultInjection: true } });
  const base = await current.app.listen({ port: 0, host: '127.0.0.1' });
  return { t: current, base };
}

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function faults(base: string, store: 'ok' | 'unavailable'): Promise<void> {
  const res = await fetch(`${base}/v1/admin/faults`, { method: 'POST', headers: { ...auth('admin'), 'content-type': 'application/json' }, body: JSON.stringify({ store }) });
  expect(res.status).toBe(200);
}

function create(base: string, taskId: string): Promise<Response> {
  return fetch(`${base}/v1/checkpoints`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify(checkpointBody(taskId)) });
}

describe('/readyz', () => {
  it('answers 200 degraded while the store is down and the queue takes writes, naming the queue as accepting and its depth', async () => {
    const { base } = await listening();
    expect(await get(`${base}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready', store: { status: 'ok' }, queue: { depth: 0, accepting: true } } });

    await faults(base, 'unavailable');
    expect(await get(`${base}/readyz`)).toEqual({
      status: 200,
      body: { status: 'degraded', store: { name: TEST_STORE, status: 'unavailable' }, queue: { depth: 0, bytes: 0, oldestAgeSeconds: 0, accepting: true } },
    });
    expect((await create(base, 'ready-queued')).status).toBe(202);
    expect(await get(`${base}/readyz`)).toMatchObject({ status: 200, body: { status: 'degraded', queue: { depth: 1, accepting: true } } });

    await faults(base, 'ok');
    await queueDrained(current!.app);
    expect(await get(`${base}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready', queue: { depth: 0 } } });
  });

  it('answers 503 once the queue is full while the store is down, and 200 again when the store is back', async () => {
    const { base } = await listening({ queueMaxBytes: 8_000 });
    await faults(base, 'unavailable');
    let answer = 202;
    for (let i = 0; i < 20 && answer === 202; i++) answer = (await create(base, 'ready-full')).status;
    expect(answer).toBe(503);
    const full = await get(`${base}/readyz`);
    expect(full).toMatchObject({ status: 503, body: { status: 'unavailable', store: { status: 'unavailable' }, queue: { accepting: false } } });
    expect((full.body.queue as { depth: number }).depth).toBeGreaterThan(0);

    await faults(base, 'ok');
    await queueDrained(current!.app);
    expect(await get(`${base}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready', queue: { depth: 0, accepting: true } } });
  });

  it('answers 503 while the store is down when the queue is turned off', async () => {
    const { base } = await listening({ queueMaxBytes: 0 });
    await faults(base, 'unavailable');
    expect(await get(`${base}/readyz`)).toEqual({ status: 503, body: { status: 'unavailable', store: { name: TEST_STORE, status: 'unavailable' }, queue: { enabled: false } } });
  });
});

describe('/livez', () => {
  it('answers 200 without a token, whatever the store does', async () => {
    const { base } = await listening({ queueMaxBytes: 0 });
    expect(await get(`${base}/livez`)).toEqual({ status: 200, body: { status: 'ok' } });
    await faults(base, 'unavailable');
    expect(await get(`${base}/livez`)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
  });
});
