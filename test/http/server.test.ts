import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBinding } from '../../src/store/fdb.js';
import { startServer } from '../support/server.js';

const fdbClientMissing = await loadBinding().then(
  () => false,
  () => true,
);

describe('the server process', () => {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  afterEach(() => {
    child?.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers GET /healthz and /readyz over a real socket on the embedded store', async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-server-'));
    const server = startServer({ BATON_DATA_DIR: dir });
    child = server.child;
    const base = await server.url;
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ store: { name: 'lmdb', status: 'ok' } });
  });

  it('stops with one sentence when the configuration is invalid', async () => {
    const server = startServer({ BATON_STORE: 'postgres' });
    child = server.child;
    await expect(server.url).rejects.toThrow(/BATON_STORE/);
    expect(server.output()).not.toMatch(/\n\s+at /);
  });

  it.runIf(fdbClientMissing)('stops with one sentence naming what to install when BATON_STORE=fdb has no FoundationDB client', async () => {
    const server = startServer({ BATON_STORE: 'fdb' });
    child = server.child;
    await expect(server.url).rejects.toThrow(/libfdb_c/);
    expect(server.output()).toMatch(/BATON_STORE=fdb needs the FoundationDB client library[^\n]*install/);
    expect(server.output()).not.toMatch(/\n\s+at /);
  });
});
