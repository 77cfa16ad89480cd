/**
 * The real server process for socket tests that start, kill and restart it:
 * `startServer` with a writer token and a data directory, bounded in time.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS } from './app.js';
import { startServer } from './server.js';

export interface RunningServer {
  child: ChildProcess;
  url: string;
  output: () => string;
}

export const WRITER = { authorization: `Bearer ${TOKENS.writer}` };

export function tempDataDir(prefix = 'baton-socket-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string | undefined): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** Starts `src/main.ts` on `dataDir` with the test tokens; rejects when it is not listening within `timeoutMs`. */
export async function startBaton(dataDir: string, env: Record<string, string> = {}, timeoutMs = 60_000): Promise<RunningServer> {
  const server = startServer({
    BATON_DATA_DIR: dataDir,
    BATON_TOKENS: `writer:${TOKENS.writer},auditor:${TOKENS.auditor},admin:${TOKENS.admin}`,
    ...env,
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`The server did not listen within ${timeoutMs} ms: ${server.output()}`)), timeoutMs);
  });
  try {
    const url = await Promise.race([server.url, timeout]);
    return { child: server.child, url, output: server.output };
  } catch (error) {
    server.child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `child` has exited (at once when it already has), or after `timeoutMs`. */
export function exited(child: ChildProcess, timeoutMs = 10_000): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Stops a server: SIGTERM (graceful), then SIGKILL when it does not exit in time. */
export async function stopBaton(child: ChildProcess | undefined, timeoutMs = 10_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  if (!(await exited(child, timeoutMs))) {
    child.kill('SIGKILL');
    await exited(child, timeoutMs);
  }
}
