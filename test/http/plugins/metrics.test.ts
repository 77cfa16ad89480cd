import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/metrics.js';
import { bearer, buildTestApp, TOKENS, type TestApp } from './build-test-app.js';

const NAMES = [
  'checkpoint_write_latency_ms',
  'checkpoint_read_latency_ms',
  'handoff_success_rate',
  'recovery_attempts_total',
  'checkpoint_size_bytes',
  'store_errors_total',
  'http_requests_total',
  'http_request_duration_ms',
  'queue_depth',
  'queue_age_seconds',
  'disk_free_bytes',
  'disk_size_bytes',
  'process_cpu_user_seconds_total',
];

describe('the metrics plugin', () => {
  let test: TestApp | undefined;
  afterEach(async () => {
    await test?.app.close();
    test = undefined;
  });

  it('exposes every Baton metric in the Prometheus text format', async () => {
    test = await buildTestApp();
    const res = await test.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of NAMES) expect(res.body).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
  });

  it('counts requests by route pattern and status, and unmatched ones as "unmatched"', async () => {
    test = await buildTestApp();
    await test.app.inject({ method: 'GET', url: '/test/items?limit=3', headers: bearer(TOKENS.writer) });
    await test.app.inject({ method: 'GET', url: '/no/such/route' });
    const res = await test.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.body).toContain('http_requests_total{method="GET",route="/test/items",status="200"} 1');
    expect(res.body).toContain('http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(res.body).toMatch(/^http_request_duration_ms_count\{method="GET",route="\/test\/items",status="200"\} 1$/m);
  });

  it('requires the metrics token, or an admin token, when one is configured', async () => {
    test = await buildTestApp({ metricsToken: 'metrics-secret-0123456789' });
    const { app } = test;
    const none = await app.inject({ method: 'GET', url: '/metrics' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await app.inject({ method: 'GET', url: '/metrics', headers: bearer('wrong') })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/metrics', headers: bearer(TOKENS.writer) })).statusCode).toBe(403);
    expect((await app.inject({ method: 'GET', url: '/metrics', headers: bearer('metrics-secret-0123456789') })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/metrics', headers: bearer(TOKENS.admin) })).statusCode).toBe(200);
  });

  it('gives every app its own registry', async () => {
    const one = createMetrics();
    const two = createMetrics();
    one.recoveryAttempts.inc();
    expect((await one.recoveryAttempts.get()).values[0]?.value).toBe(1);
    expect((await two.recoveryAttempts.get()).values[0]?.value).toBe(0);
    expect(one.registry).not.toBe(two.registry);
  });
});
