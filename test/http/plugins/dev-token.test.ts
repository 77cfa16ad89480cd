import { afterEach, describe, expect, it, vi } from 'vitest';
import { bearer, buildTestApp, type TestApp } from './build-test-app.js';

describe('the development token', () => {
  const apps: TestApp[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    await Promise.all(apps.splice(0).map((test) => test.app.close()));
  });

  it('is made when no token is configured, printed once to stderr with a curl line, and accepted as admin', async () => {
    const printed: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    apps.push(await buildTestApp({ tokens: '' }));
    apps.push(await buildTestApp({ tokens: '' }));

    const notice = printed.join('');
    const token = /curl -H "Authorization: Bearer ([A-Za-z0-9_-]+)"/.exec(notice)?.[1];
    expect(token).toHaveLength(32);
    expect(notice).toContain('BATON_TOKENS="writer:<secret>,auditor:<secret>');
    expect(notice.split(token!).length - 1).toBe(2);

    for (const { app } of apps) {
      const res = await app.inject({ method: 'POST', url: '/test/admin-only', headers: bearer(token!) });
      expect(res.statusCode).toBe(200);
      expect((await app.inject({ method: 'POST', url: '/test/admin-only' })).statusCode).toBe(401);
    }
  });

  it('is not made when tokens are configured', async () => {
    const write = vi.spyOn(process.stderr, 'write');
    apps.push(await buildTestApp());
    expect(write).not.toHaveBeenCalled();
  });
});
