/**
 * GET /v1/checkpoints/:id/resume-prompt and POST
 * /v1/checkpoints/:id/stale-check over the real app and a real LMDB store.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue, tenantKeyspace } from '../../../src/store/keyspace.js';
import { decompress } from '../../../src/service/repository/compression.js';
import { auth, checkpointBody, useTestApp, type Who } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';
import { SEEDS } from '../../service/fixtures/seeds.js';

const testApp = useTestApp();
const count = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
const MISSING = '0195f3a0-7c1e-7d2a-9b3c-4d5e6f708192';

async function create(extra: Json = {}): Promise<Json> {
  const res = await testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('resume-task', extra) });
  expect(res.statusCode).toBe(201);
  return res.json() as Json;
}

function prompt(id: unknown, query = '', headers: Record<string, string> = {}, who: Who = 'writer') {
  return testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${String(id)}/resume-prompt${query}`, headers: { ...auth(who), ...headers } });
}

function staleCheck(id: unknown, body: unknown, who: Who = 'writer') {
  return testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(id)}/stale-check`, headers: auth(who), payload: body as Json });
}

describe('GET /v1/checkpoints/:id/resume-prompt', () => {
  it('answers the whole prompt as markdown, with the tokens it used and no budget', async () => {
    const cp = await create();
    const res = await prompt(cp.id);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(Number(res.headers['baton-prompt-tokens'])).toBe(count(res.body));
    expect(res.headers['baton-prompt-budget']).toBeUndefined();
    expect(res.headers['baton-prompt-dropped']).toBeUndefined();
    expect(res.body).toContain('# Resuming task: resume-task');
    expect(res.body).toContain('use LMDB — why: embedded, durable');
    expect(res.body).toContain('wire the CLI');
  });

  it('fits maxTokens and says what gave way', async () => {
    const cp = await create();
    for (const budget of [400, 120, 60, 20, 5, 1]) {
      const res = await prompt(cp.id, `?maxTokens=${budget}`);
      expect(res.statusCode).toBe(200);
      const used = Number(res.headers['baton-prompt-tokens']);
      expect(used).toBe(count(res.body));
      expect(used).toBeLessThanOrEqual(budget);
      expect(res.body.trim()).not.toBe('');
      expect(res.headers['baton-prompt-budget']).toBe(String(budget));
    }
    const small = await prompt(cp.id, '?maxTokens=20');
    expect(String(small.headers['baton-prompt-dropped'])).toContain('one-line-form');
    expect(small.body).toMatch(/^Now: /);
  });

  it('answers JSON when Accept asks for it and not for markdown', async () => {
    const cp = await create();
    const res = await prompt(cp.id, '?maxTokens=60', { accept: 'application/json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json() as Json;
    expect(body).toMatchObject({ checkpointId: cp.id, version: 1, budget: 60, tokens: Number(res.headers['baton-prompt-tokens']) });
    expect(count(String(body.text))).toBe(body.tokens);
    expect(Array.isArray(body.dropped)).toBe(true);
    const both = await prompt(cp.id, '', { accept: 'application/json, text/markdown' });
    expect(both.headers['content-type']).toMatch(/^text\/markdown/);
  });

  it('renders an earlier version with ?version=N', async () => {
    const cp = await create();
    const patched = await testApp().app.inject({
      method: 'PATCH',
      url: `/v1/checkpoints/${String(cp.id)}`,
      headers: { ...auth(), 'content-type': 'application/merge-patch+json', 'if-match': '"1"' },
      payload: JSON.stringify({ executionState: { phase: 'testing' } }),
    });
    expect(patched.statusCode).toBe(200);
    expect((await prompt(cp.id)).body).toContain('Phase: testing.');
    expect((await prompt(cp.id, '?version=1')).body).toContain('Phase: implementing.');
  });

  it('refuses bad budgets with 400 naming query.maxTokens', async () => {
    const cp = await create();
    for (const bad of ['0', '-1', 'abc', '1000001', '1.5', '']) {
      const body = expectProblem(await prompt(cp.id, `?maxTokens=${bad}`), 400, 'validation_failed');
      expect(JSON.stringify(body.errors)).toContain('query.maxTokens');
    }
    expect((await prompt(cp.id, '?maxTokens=1000000')).statusCode).toBe(200);
  });

  it('is 404 for an unknown checkpoint, 400 for an id that is not a UUID, 401 without a token', async () => {
    expectProblem(await prompt(MISSING), 404, 'not_found');
    expectProblem(await prompt('not-a-uuid'), 400, 'validation_failed');
    const res = await testApp().app.inject({ method: 'GET', url: `/v1/checkpoints/${MISSING}/resume-prompt` });
    expectProblem(res, 401, 'unauthorized');
  });

  it('lets auditors read it, and withholds a corrupt checkpoint with 409', async () => {
    const cp = await create();
    expect((await prompt(cp.id, '', {}, 'auditor')).statusCode).toBe(200);
    const key = tenantKeyspace('default').checkpoints.pack(String(cp.taskId), String(cp.id), 0);
    await testApp().store.transact(async (tx) => {
      const record = decodeValue<{ c: string; h: string }>(decompress(Buffer.from((await tx.get(key))!)));
      tx.set(key, encodeValue({ ...record, c: record.c.replace('wrote the parser', 'TAMPERED') }));
    });
    const res = await prompt(cp.id);
    expectProblem(res, 409, 'checkpoint_corrupted');
    expect(res.body).not.toContain('TAMPERED');
  });

  it('fits every seed example imported as agents write it within 2,000 tokens, every never-dropped part present', async () => {
    for (const seed of SEEDS) {
      const query = `format=${seed.format}${seed.taskId === undefined ? '' : `&taskId=${encodeURIComponent(seed.taskId)}`}`;
      const imported = await testApp().app.inject({
        method: 'POST',
        url: `/v1/import?${query}`,
        headers: { ...auth(), 'content-type': seed.mediaType },
        payload: seed.document,
      });
      expect(imported.statusCode, seed.name).toBe(201);
      const id = (imported.json() as { checkpoint: Json }).checkpoint.id;
      const res = await prompt(id, '?maxTokens=2000');
      expect(res.statusCode).toBe(200);
      expect(Number(res.headers['baton-prompt-tokens'])).toBeLessThanOrEqual(2000);
      for (const { heading, phrase } of seed.must) {
        expect(res.body, seed.name).toContain(heading);
        expect(res.body, seed.name).toContain(phrase);
      }
    }
  });
});

describe('POST /v1/checkpoints/:id/stale-check', () => {
  const H = 'a'.repeat(64);

  it('names the files changed since the checkpoint', async () => {
    const cp = await create();
    const res = await staleCheck(cp.id, {
      files: [
        { path: 'src/cli.ts', sha256: 'b'.repeat(64) },
        { path: 'src/cli.ts', sha256: H },
        { path: 'src/parser.ts', mtime: '2000-01-01T00:00:00Z' },
        { path: 'test/parser.test.ts', mtime: Date.now() + 60_000 },
        { path: 'elsewhere.txt', mtime: Date.now() },
        { path: 'src/parser.ts' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as Json;
    expect(body).toMatchObject({ checkpointId: cp.id, checkpointVersion: 1, checkpointUpdatedAt: cp.updatedAt, stale: true, counts: { changed: 2, unchanged: 2, unknown: 2 } });
    expect((body.files as Json[]).map((f) => `${String(f.status)}/${String(f.reason)}`)).toEqual([
      'changed/sha256',
      'unchanged/sha256',
      'unchanged/mtime',
      'changed/mtime',
      'unknown/untracked',
      'unknown/no-evidence',
    ]);
    expect(Number.isNaN(Date.parse(String(body.checkedAt)))).toBe(false);
  });

  it('is a read: auditors may call it, and it writes nothing (no event)', async () => {
    const cp = await create();
    const before = await testApp().app.inject({ method: 'GET', url: '/v1/events', headers: auth() });
    const res = await staleCheck(cp.id, { files: [{ path: 'src/cli.ts', sha256: H }] }, 'auditor');
    expect(res.statusCode).toBe(200);
    expect((res.json() as Json).stale).toBe(false);
    const after = await testApp().app.inject({ method: 'GET', url: '/v1/events', headers: auth() });
    expect((after.json() as { items: unknown[] }).items).toHaveLength((before.json() as { items: unknown[] }).items.length);
  });

  it('refuses bad bodies with 400, listing the fields', async () => {
    const cp = await create();
    const cases: Array<[unknown, string]> = [
      [{}, 'files'],
      [{ files: 'x' }, 'files'],
      [{ files: [{}] }, 'files.0.path'],
      [{ files: [{ path: '' }] }, 'files.0.path'],
      [{ files: [{ path: 'p'.repeat(4097) }] }, 'files.0.path'],
      [{ files: [{ path: 'a', mtime: 'yesterday' }] }, 'files.0.mtime'],
      [{ files: [{ path: 'a', mtime: -1 }] }, 'files.0.mtime'],
      [{ files: [{ path: 'a', mtime: 1.5 }] }, 'files.0.mtime'],
      [{ files: [{ path: 'a', sha256: 'xyz' }] }, 'files.0.sha256'],
      [{ files: [{ path: 'a', size: 3 }] }, 'files.0.size'],
      [{ files: [], extra: true }, 'extra'],
      [{ files: Array.from({ length: 10_001 }, (_, i) => ({ path: `f${i}` })) }, 'files'],
    ];
    for (const [body, field] of cases) {
      const problem = expectProblem(await staleCheck(cp.id, body), 400, 'validation_failed');
      expect((problem.errors as Array<{ field: string }>).map((e) => e.field)).toContain(field);
    }
    const most = await staleCheck(cp.id, { files: Array.from({ length: 10_000 }, (_, i) => ({ path: `f${i}` })) });
    expect(most.statusCode).toBe(200);
  });

  it('is 404 for an unknown checkpoint and 401 without a token', async () => {
    expectProblem(await staleCheck(MISSING, { files: [] }), 404, 'not_found');
    const res = await testApp().app.inject({ method: 'POST', url: `/v1/checkpoints/${MISSING}/stale-check`, payload: { files: [] } });
    expectProblem(res, 401, 'unauthorized');
  });
});

describe('OpenAPI', () => {
  it('documents both routes', async () => {
    const res = await testApp().app.inject({ method: 'GET', url: '/openapi.json' });
    const paths = (res.json() as { paths: Record<string, Json> }).paths;
    expect(paths['/v1/checkpoints/{id}/resume-prompt']?.get).toBeDefined();
    expect(paths['/v1/checkpoints/{id}/stale-check']?.post).toBeDefined();
  });
});
