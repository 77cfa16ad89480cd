/**
 * /console as the server answers it (docs/console.md): the same page, with
 * no token, at every console address; its assets; the headers that keep the
 * page to its own script and origin; and the bundle built when missing or
 * older than its sources, so a fresh clone serves it without a build step.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleBundle, type BundleLog } from '../../src/http/console-bundle.js';
import { useTestApp } from '../support/app.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('GET /console', () => {
  const testApp = useTestApp();
  const get = (url: string, headers: Record<string, string> = {}) => testApp().app.inject({ method: 'GET', url, headers });

  it('answers the page without a token at /console and at every deep link', async () => {
    const page = await get('/console');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<script type="module" src="/console/assets/console.js">');
    for (const url of ['/console/', '/console/tasks/release-42', '/console/tasks/a%2Fb%20c/audit', '/console/checkpoints/01900000-0000-7000-8000-000000000001?version=2', '/console/events']) {
      const deep = await get(url, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
      expect(deep.statusCode, url).toBe(200);
      expect(deep.body, url).toBe(page.body);
    }
  });

  it('keeps the page to its own script, styles and origin, never framed, never cached stale', async () => {
    const page = await get('/console/tasks/x');
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['cache-control']).toBe('no-cache');
  });

  it('serves the script and styles, and a problem for an asset that does not exist', async () => {
    const script = await get('/console/assets/console.js');
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^(application|text)\/javascript/);
    expect(script.body).toContain('baton.console.token');
    const styles = await get('/console/assets/console.css');
    expect(styles.statusCode).toBe(200);
    expect(styles.headers['content-type']).toMatch(/^text\/css/);
    const missing = await get('/console/assets/nothing.js');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'route_not_found' });
  });

  it('is not part of the API: no writes, and not in the OpenAPI document', async () => {
    const post = await testApp().app.inject({ method: 'POST', url: '/console', payload: {} });
    expect(post.statusCode).toBe(404);
    expect((await get('/openapi.json')).body).not.toContain('/console');
  });
});

describe('the console bundle', () => {
  let root: string;
  const logged: string[] = [];
  const log: BundleLog = { info: (_f, m) => logged.push(`info ${m}`), warn: (_f, m) => logged.push(`warn ${m}`), error: (_f, m) => logged.push(`error ${m}`) };

  beforeAll(() => {
    // A checkout of its own: the console's sources copied (this test changes them), the rest linked.
    root = mkdtempSync(join(tmpdir(), 'baton-console-root-'));
    cpSync(join(ROOT, 'console'), join(root, 'console'), { recursive: true });
    symlinkSync(join(ROOT, 'src'), join(root, 'src'));
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is built when missing, kept while its sources are the same, and built again when one changes', async () => {
    const out = join(root, 'dist', 'console');
    expect(await consoleBundle({ root, log })).toBe(out);
    expect(logged).toEqual(['info console built']);
    for (const file of ['index.html', 'assets/console.js', 'assets/console.css', 'build.json']) expect(existsSync(join(out, file)), file).toBe(true);
    const inputs = Object.keys((JSON.parse(readFileSync(join(out, 'build.json'), 'utf8')) as { inputs: Record<string, string> }).inputs);
    expect(inputs).toContain('console/src/main.ts');
    expect(inputs.some((path) => path.endsWith('src/client/sse.ts'))).toBe(true);

    const builtAt = statSync(join(out, 'assets', 'console.js')).mtimeMs;
    expect(await consoleBundle({ root, log })).toBe(out);
    expect(logged).toHaveLength(1);
    expect(statSync(join(out, 'assets', 'console.js')).mtimeMs).toBe(builtAt);

    writeFileSync(join(root, 'console', 'styles.css'), `${readFileSync(join(root, 'console', 'styles.css'), 'utf8')}\n.added-by-the-test { color: #123456; }\n`);
    expect(await consoleBundle({ root, log })).toBe(out);
    expect(logged).toEqual(['info console built', 'info console built']);
    expect(readFileSync(join(out, 'assets', 'console.css'), 'utf8')).toContain('#123456');
  });

  it('serves the bundle it has when its sources are gone, and is absent, saying why, when there is neither', async () => {
    const out = join(root, 'dist', 'console');
    await consoleBundle({ root, log });
    writeFileSync(join(root, 'console', 'index.html'), '<!doctype html><title>changed</title>');
    rmSync(join(root, 'console', 'src'), { recursive: true });
    logged.length = 0;
    expect(await consoleBundle({ root, log })).toBe(out);
    expect(logged).toEqual(['warn the console could not be rebuilt from its sources; serving the bundle built before']);

    rmSync(out, { recursive: true });
    logged.length = 0;
    expect(await consoleBundle({ root, log })).toBeUndefined();
    expect(logged).toEqual(['error the console could not be built; /console is not served']);
  });
});
