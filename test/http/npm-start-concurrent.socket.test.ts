/**
 * Four `npm start`s at once from one install directory, each with its own
 * port and data directory, as a host running several instances starts them
 * (issue 46): every one builds or finds its build, starts and answers
 * /healthz. The build replaces `dist` atomically (`scripts/build.mjs`); when
 * it emptied `dist/` and wrote it again, a start loading modules while
 * another build ran died with `Cannot find module dist/config.js`.
 *
 * The install is a fresh copy of this checkout's sources (node_modules
 * linked), so that no build exists yet and all four race to make one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { TOKENS } from '../support/app.js';
import { exited, logLines } from '../support/crash-server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STARTS = 4;
const STAGGER_MS = 300;

const children: ChildProcess[] = [];
const servers: number[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  // npm's shell does not pass SIGKILL on: the servers are stopped by their own pids.
  for (const pid of servers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await Promise.all(children.map((child) => exited(child, 5_000)));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh install directory: the sources the build and the server read, and the checkout's node_modules. */
function freshInstall(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-install-'));
  dirs.push(dir);
  for (const part of ['package.json', 'scripts', 'src', 'console', 'proto']) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

interface Started {
  url: string;
  pid: number;
}

/** Runs `npm start` in `install` with its own data directory; resolves once it listens, rejects with its output when it exits first. */
function npmStart(install: string): Promise<Started> {
  const data = mkdtempSync(join(tmpdir(), 'baton-npm-data-'));
  dirs.push(data);
  const child = spawn('npm', ['start'], {
    cwd: install,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', BATON_DATA_DIR: data, BATON_TOKENS: `writer:${TOKENS.writer}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (!match) return;
      const pid = (logLines(output).find((line) => line.msg?.startsWith('Server listening')) as { pid?: number } | undefined)?.pid;
      if (pid !== undefined) servers.push(pid);
      resolve({ url: match[1]!, pid: pid ?? -1 });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`npm start exited with code ${code}: ${output}`)));
  });
}

it('starts four servers at once from one install directory, each on its own port and data directory', { timeout: 180_000 }, async () => {
  const install = freshInstall();
  // Spread over about a build's time, so that some start loading modules while others build.
  const started = await Promise.all(Array.from({ length: STARTS }, (_, i) => sleep(i * STAGGER_MS).then(() => npmStart(install))));
  expect(new Set(started.map((s) => s.url)).size).toBe(STARTS);
  for (const { url } of started) {
    const res = await fetch(`${url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  }
  // A fifth start finds the build current and changes nothing under the four running servers.
  const fifth = await npmStart(install);
  expect((await fetch(`${fifth.url}/healthz`)).status).toBe(200);
  for (const { url } of started) expect((await fetch(`${url}/readyz`)).status).toBe(200);
});
