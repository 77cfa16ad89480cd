/**
 * With the npm package `foundationdb` present but `libfdb_c` missing, the
 * binding prints two lines of its own before it throws; start-up must still
 * print only the one sentence that says what to install. Runs only where the
 * package resolves and its native part cannot load (npm drops the package
 * when it cannot build, so this needs a client removed after `npm ci`, or the
 * package made resolvable with NODE_PATH).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLIENT_MISSING_MESSAGE, loadBinding } from '../../src/store/fdb.js';

const resolves = (() => {
  try {
    createRequire(import.meta.url).resolve('foundationdb');
    return true;
  } catch {
    return false;
  }
})();
const clientLoads = await loadBinding().then(
  () => true,
  () => false,
);

it.runIf(resolves && !clientLoads)('prints exactly one sentence when the package is present and libfdb_c is not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-fdb-start-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, BATON_STORE: 'fdb', BATON_DATA_DIR: dir, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(`${CLIENT_MISSING_MESSAGE}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
