import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOG_REDACT_PATHS } from '../../src/http/plugins/auth.js';
import { auth, buildTestApp, checkpointBody, TOKENS, type TestApp } from '../support/app.js';

describe('observability of checkpoint operations', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(async () => t.close());

  it('counts writes and reads in the checkpoint latency histograms', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('obs-1') });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    await t.app.inject({ method: 'GET', url: `/v1/checkpoints/${id}`, headers: auth() });
    await t.app.inject({ method: 'GET', url: '/v1/tasks/obs-1/checkpoints', headers: auth() });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/checkpoint_write_latency_ms_count\{operation="create"\} 1\b/);
    expect(metrics.body).toMatch(/checkpoint_read_latency_ms_count\{operation="get"\} 1\b/);
    expect(metrics.body).toMatch(/checkpoint_read_latency_ms_count\{operation="history"\} 1\b/);
    expect(metrics.body).toMatch(/checkpoint_size_bytes_count 1\b/);
    for (const name of ['handoff_success_rate', 'recovery_attempts_total', 'http_requests_total']) expect(metrics.body).toContain(name);
  });

  it('describes every v1 route in the OpenAPI document', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const spec = res.json() as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(spec.openapi).toMatch(/^3\.1/);
    const expected: [string, string][] = [
      ['/v1/checkpoints', 'post'],
      ['/v1/checkpoints', 'get'],
      ['/v1/checkpoints/{id}', 'get'],
      ['/v1/checkpoints/{id}', 'patch'],
      ['/v1/checkpoints/{id}/finalize', 'post'],
      ['/v1/checkpoints/{id}/links', 'post'],
      ['/v1/checkpoints/{id}/lineage', 'get'],
      ['/v1/checkpoints/{id}/revisions', 'get'],
      ['/v1/tasks/{taskId}/checkpoints/latest', 'get'],
      ['/v1/tasks/{taskId}/checkpoints', 'get'],
      ['/v1/tasks/{taskId}/audit', 'get'],
      ['/v1/tasks/{taskId}/audit/verify', 'get'],
      ['/v1/events', 'get'],
      ['/v1/keys', 'get'],
    ];
    for (const [path, method] of expected) expect(spec.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    const body = JSON.stringify(spec.paths['/v1/checkpoints']!.post);
    expect(body).toContain('executionState');
  });

  it('logs each checkpoint write as JSON with request id, task id and checkpoint id, and never the token', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logged = await buildTestApp({ app: { logger: pino({ level: 'info', redact: LOG_REDACT_PATHS }, sink) } });
    try {
      const res = await logged.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), 'x-request-id': 'req-obs-42' }, payload: checkpointBody('obs-log') });
      expect(res.statusCode).toBe(201);
      const entry = lines.find((line) => line.msg === 'checkpoint created');
      expect(entry).toMatchObject({ reqId: 'req-obs-42', taskId: 'obs-log', checkpointId: res.json().id, tenant: 'default' });
      expect(JSON.stringify(lines)).not.toContain(TOKENS.writer);
    } finally {
      await logged.close();
    }
  });

  it("logs a read nothing and a write the service's line at info, and Fastify's lines of every request at debug", async () => {
    const linesAt = async (level: string): Promise<Record<string, unknown>[]> => {
      const lines: Record<string, unknown>[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      });
      const logged = await buildTestApp({ app: { logger: pino({ level, redact: LOG_REDACT_PATHS }, sink) } });
      try {
        const created = await logged.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), 'x-request-id': `req-${level}-w` }, payload: checkpointBody(`obs-${level}`) });
        expect(created.statusCode).toBe(201);
        const read = await logged.app.inject({ method: 'GET', url: `/v1/checkpoints/${created.json().id as string}`, headers: { ...auth(), 'x-request-id': `req-${level}-r` } });
        expect(read.statusCode).toBe(200);
        const missing = await logged.app.inject({ method: 'GET', url: '/v1/checkpoints/0190a000-0000-7000-8000-000000000000', headers: { ...auth(), 'x-request-id': `req-${level}-404` } });
        expect(missing.statusCode).toBe(404);
      } finally {
        await logged.close();
      }
      return lines;
    };
    const info = await linesAt('info');
    expect(info.filter((line) => line.reqId === 'req-info-r')).toEqual([]);
    expect(info.filter((line) => line.reqId === 'req-info-w').map((line) => line.msg)).toEqual(['checkpoint created']);
    // A refusal is still logged at info, by the error handler.
    expect(info.filter((line) => line.reqId === 'req-info-404').map((line) => line.msg)).toEqual(['request rejected']);
    const debug = await linesAt('debug');
    const read = debug.filter((line) => line.reqId === 'req-debug-r');
    expect(read.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
    expect(read[0]).toMatchObject({ level: 20, req: { method: 'GET' } });
    expect(read[1]).toMatchObject({ level: 20, res: { statusCode: 200 } });
    expect(typeof read[1]!.responseTime).toBe('number');
    expect(debug.filter((line) => line.reqId === 'req-debug-w').map((line) => line.msg)).toEqual(['incoming request', 'checkpoint created', 'request completed']);
  });
});
