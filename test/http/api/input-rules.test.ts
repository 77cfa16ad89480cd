/** Rules of what a checkpoint may be: its size limit, long file paths, and the schema version. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../../support/app.js';

describe('the checkpoint size limit', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ config: { maxCheckpointBytes: 8 * 1024 } });
  });
  afterEach(async () => t.close());

  it('refuses a checkpoint over BATON_MAX_CHECKPOINT_BYTES with 413 and stores nothing', async () => {
    const big = checkpointBody('size-1', { extensions: { notes: 'n'.repeat(9 * 1024) } });
    const res = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: big });
    expect(res.statusCode).toBe(413);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ code: 'payload_too_large' });
    const history = await t.app.inject({ method: 'GET', url: '/v1/tasks/size-1/checkpoints', headers: auth() });
    expect(history.statusCode).toBe(404);
  });

  it('refuses a patch that would grow a checkpoint past the limit, keeping the old version', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('size-2') });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/v1/checkpoints/${id}`,
      headers: { ...auth(), 'if-match': '"1"', 'content-type': 'application/merge-patch+json' },
      payload: { extensions: { notes: 'n'.repeat(9 * 1024) } },
    });
    expect(res.statusCode).toBe(413);
    const after = await t.app.inject({ method: 'GET', url: `/v1/checkpoints/${id}`, headers: auth() });
    expect(after.headers.etag).toBe('"1"');
  });

  it('stores a checkpoint naming a very long file path and finds it by that path', async () => {
    const path = `src/${'deep/'.repeat(500)}file.ts`;
    const res = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('size-3', { metrics: { filesModified: [path] } }) });
    expect(res.statusCode).toBe(201);
    const found = await t.app.inject({ method: 'GET', url: `/v1/checkpoints?file=${encodeURIComponent(path)}`, headers: auth() });
    expect(found.statusCode).toBe(200);
    expect(found.json().items.map((c: { id: string }) => c.id)).toEqual([res.json().id]);
  });
});

describe('the schema version on create', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(async () => t.close());

  it('accepts schemaVersion "1.0" as agents of the protocol send it, and refuses any other', async () => {
    const ok = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('schema-1', { schemaVersion: '1.0' }) });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().schemaVersion).toBe('1.0');
    const bad = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('schema-2', { schemaVersion: '2.0' }) });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { field: string }) => e.field)).toEqual(['schemaVersion']);
  });
});
