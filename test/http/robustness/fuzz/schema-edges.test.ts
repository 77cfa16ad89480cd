/** Inputs the schema allows but that sit at its edges (deep nesting inside extensions, a 3,000-character file path, a 1,000-character label), on an app of their own: these may be stored, but must never yield a 5xx. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../../../support/app.js';
import { JSON_TYPE, nested, STACK } from './harness.js';

describe('inputs at the edge of what the schema allows (own app: these may be stored)', () => {
  let edge: TestApp;
  beforeAll(async () => {
    edge = await buildTestApp();
  });
  afterAll(async () => {
    await edge?.close();
  });

  const post = async (body: Record<string, unknown> | string): Promise<{ status: number; body: string; json: () => Record<string, unknown> }> => {
    const res = await edge.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE }, payload: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.statusCode, body: res.body, json: () => res.json() as Record<string, unknown> };
  };

  it('a 10,000-level value inside extensions (schema: any JSON) is stored or refused with a problem, never a 5xx', async () => {
    for (const deep of [nested(10_000, 'array'), nested(10_000, 'object')]) {
      const res = await post(`{"taskId":"edge-deep","agentId":"a","extensions":{"deep":${deep}}}`);
      expect(res.status, res.body.slice(0, 300)).toBeLessThan(500);
      if (res.status >= 400) expect(res.json()).toMatchObject({ code: expect.stringMatching(/^(validation_failed|payload_too_large)$/) });
      expect(res.body).not.toMatch(STACK);
    }
  });

  it('a 3,000-character file path (schema: up to 4,096) is stored, or refused as invalid naming the field; not 413 for a 3 KB body', async () => {
    const path = `src/${'d/'.repeat(1498)}f.ts`;
    expect(path.length).toBeLessThanOrEqual(4096);
    const res = await post(checkpointBody('edge-file', { metrics: { filesModified: [path] } }));
    expect(res.status, res.body.slice(0, 300)).not.toBe(413);
    expect([201, 400], res.body.slice(0, 300)).toContain(res.status);
    if (res.status === 400) expect(JSON.stringify(res.json().errors)).toContain('filesModified');
  });

  it('a label value of 1,000 characters (the schema maximum) is stored and found by label search', async () => {
    const value = 'v'.repeat(1000);
    const res = await post(checkpointBody('edge-label', { labels: { long: value } }));
    expect(res.status, res.body.slice(0, 300)).toBe(201);
    const found = await edge.app.inject({ method: 'GET', url: `/v1/checkpoints?label.long=${value}`, headers: auth() });
    expect(found.statusCode).toBe(200);
    expect((found.json() as { items: { id: string }[] }).items.map((i) => i.id)).toEqual([res.json().id]);
  });
});
