import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.js';
import { LOG_REDACT_PATHS, parseTokens, parseTokensFile } from '../../../src/http/plugins/auth.js';
import { bearer, buildTestApp, TOKENS, type TestApp } from './build-test-app.js';

const body = { taskId: 't-1', iteration: 0, executionState: { phase: 'planning', currentFocus: 'design' } };
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('the auth plugin', () => {
  let test: TestApp | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await test?.app.close();
    test = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function build(overrides = {}): Promise<TestApp> {
    test = await buildTestApp(overrides);
    return test;
  }

  it('refuses a request without a token with 401 unauthorized and WWW-Authenticate: Bearer', async () => {
    const { app } = await build();
    const res = await app.inject({ method: 'GET', url: '/test/whoami' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json().code).toBe('unauthorized');
  });

  it('refuses a wrong token with 401 and says the token is invalid', async () => {
    const { app } = await build();
    for (const authorization of ['Bearer not-a-token', 'Basic d3JpdGVyOnNlY3JldA==', `Bearer ${TOKENS.writer}x`]) {
      const res = await app.inject({ method: 'GET', url: '/test/whoami', headers: { authorization } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('applies the default roles: auditors read but may not write, writers do both', async () => {
    const { app } = await build();
    const auditorPost = await app.inject({ method: 'POST', url: '/test/checkpoints', headers: bearer(TOKENS.auditor), payload: body });
    expect(auditorPost.statusCode).toBe(403);
    expect(auditorPost.json().code).toBe('forbidden');
    const auditorGet = await app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(TOKENS.auditor) });
    expect(auditorGet.statusCode).toBe(200);
    const writerPost = await app.inject({ method: 'POST', url: '/test/checkpoints', headers: bearer(TOKENS.writer), payload: body });
    expect(writerPost.statusCode).toBe(201);
  });

  it('applies a route’s own roles, and lets admin do everything', async () => {
    const { app } = await build();
    const writer = await app.inject({ method: 'POST', url: '/test/admin-only', headers: bearer(TOKENS.writer) });
    expect(writer.statusCode).toBe(403);
    const admin = await app.inject({ method: 'POST', url: '/test/admin-only', headers: bearer(TOKENS.admin) });
    expect(admin.statusCode).toBe(200);
  });

  it('puts the token’s role, tenant and a short digest as subject on request.principal', async () => {
    const { app } = await build();
    const acme = await app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(TOKENS.acmeWriter) });
    expect(acme.json()).toEqual({ role: 'writer', tenant: 'acme', subject: sha256(TOKENS.acmeWriter).slice(0, 12) });
    const plain = await app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(TOKENS.auditor) });
    expect(plain.json()).toMatchObject({ role: 'auditor', tenant: 'default' });
  });

  it('accepts tokens from a file of SHA-256 digests, with comments and tenants', async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-tokens-'));
    const file = join(dir, 'tokens');
    writeFileSync(file, `# auditors of tenant acme\n\nauditor:${sha256('file-auditor-secret-0123')}:acme\n`);
    const { app } = await build({ tokens: '', tokensFile: file });
    const res = await app.inject({ method: 'GET', url: '/test/whoami', headers: bearer('file-auditor-secret-0123') });
    expect(res.json()).toMatchObject({ role: 'auditor', tenant: 'acme' });
    const wrong = await app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(sha256('file-auditor-secret-0123')) });
    expect(wrong.statusCode).toBe(401);
  });

  it('rejects malformed token settings at start with a sentence that does not echo the secret', () => {
    for (const spec of ['owner:secret-one', 'writer:', 'writer:secret:bad tenant', 'writer:a:b:c']) {
      expect(() => parseTokens(spec)).toThrow(ConfigError);
    }
    expect(() => parseTokens('owner:very-secret-value')).toThrow(/^BATON_TOKENS entry 1 (?!.*very-secret-value)/);
    expect(() => parseTokensFile('writer:not-hex')).toThrow(/BATON_TOKENS_FILE line 1/);
    expect(parseTokens(' writer:a , auditor:b:acme ,')).toHaveLength(2);
  });

  it('refuses to start when a token appears twice', async () => {
    await expect(buildTestApp({ tokens: `writer:${TOKENS.writer},admin:${TOKENS.writer}` })).rejects.toThrow(ConfigError);
  });

  it('serves the public routes without a token', async () => {
    const { app } = await build();
    for (const url of ['/healthz', '/openapi.json', '/docs', '/docs/static/index.css', '/metrics']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
    }
  });

  it('makes every request admin when auth is disabled, and says so loudly', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    });
    test = await buildTestApp({ auth: 'disabled' }, pino(stream));
    const res = await test.app.inject({ method: 'POST', url: '/test/admin-only' });
    expect(res.statusCode).toBe(200);
    const who = await test.app.inject({ method: 'GET', url: '/test/whoami' });
    expect(who.json()).toEqual({ role: 'admin', tenant: 'default', subject: 'anonymous' });
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: expect.stringMatching(/authentication is disabled/) }));
  });

  it('limits each token to rateLimitPerMinute requests, then answers 429 rate_limited with Retry-After', async () => {
    const { app } = await build({ rateLimitPerMinute: 2 });
    const call = (token: string) => app.inject({ method: 'GET', url: '/test/whoami', headers: bearer(token) });
    expect((await call(TOKENS.writer)).statusCode).toBe(200);
    expect((await call(TOKENS.writer)).statusCode).toBe(200);
    const limited = await call(TOKENS.writer);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(limited.json().code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await call(TOKENS.auditor)).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
  });

  it('exports redact paths that keep the Authorization header out of logs', () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    pino({ redact: LOG_REDACT_PATHS }, stream).info({ req: { headers: { authorization: `Bearer ${TOKENS.admin}` } } }, 'request');
    expect(lines.join('')).not.toContain(TOKENS.admin);
  });
});
