/**
 * The real server process for socket tests that start, kill and restart it:
 * `startServer` with a writer token and a data directory, bounded in time.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS } from './app.js';
import { startServer, type Launcher } from './server.js';

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

/**
 * Starts `src/main.ts` on `dataDir` with the test tokens, through `launch`
 * (a plain `spawn` unless given: the partition scenarios start it inside a
 * network namespace); rejects when it is not listening within `timeoutMs`.
 */
export async function startBaton(dataDir: string, env: Record<string, string> = {}, timeoutMs = 60_000, args: readonly string[] = [], launch?: Launcher): Promise<RunningServer> {
  const server = startServer(
    {
      BATON_DATA_DIR: dataDir,
      BATON_TOKENS: `writer:${TOKENS.writer},auditor:${TOKENS.auditor},admin:${TOKENS.admin}`,
      ...env,
    },
    args,
    launch,
  );
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

/** One JSON line of the server's pino log; the fields the socket tests read. */
export interface LogLine {
  msg?: string;
  reqId?: string;
}

export function logLines(output: string): LogLine[] {
  return output.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

/** Whether the server has logged that it routed the request with this `X-Request-Id` (Fastify's "incoming request", at `LOG_LEVEL=debug`). */
export function routed(server: RunningServer, requestId: string): boolean {
  return logLines(server.output()).some((line) => line.msg === 'incoming request' && line.reqId === requestId);
}

/** Polls `condition` every 10 ms; rejects naming `what` after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A `POST /v1/checkpoints` whose body is sent in two halves, the second only
 * when `finish` is called: once the server has routed it (see {@link routed}),
 * it is certainly in flight until then, whatever the timing of the machine.
 */
export function heldCreate(base: string, requestId: string, body: string): { response: Promise<Response>; finish: () => void } {
  const bytes = new TextEncoder().encode(body);
  const half = Math.floor(bytes.length / 2);
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      c.enqueue(bytes.subarray(0, half));
    },
  });
  // Node's fetch needs duplex: 'half' for a streamed body; the DOM RequestInit type does not know it.
  const init: RequestInit & { duplex: 'half' } = {
    method: 'POST',
    headers: { ...WRITER, 'content-type': 'application/json', 'x-request-id': requestId },
    body: stream,
    duplex: 'half',
  };
  return {
    response: fetch(`${base}/v1/checkpoints`, init),
    finish: () => {
      controller!.enqueue(bytes.subarray(half));
      controller!.close();
    },
  };
}

/**
 * The real server in its own process on a fresh data directory, for the
 * enclosing `describe`: started before its tests, stopped and its directory
 * removed after. Answers a getter of the server's base URL.
 */
export function useBatonProcess(prefix: string): () => string {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  let url = '';
  beforeAll(async () => {
    dir = tempDataDir(prefix);
    const server = await startBaton(dir);
    child = server.child;
    url = server.url;
  });
  afterAll(async () => {
    await stopBaton(child);
    removeDir(dir);
  });
  return () => url;
}

/** Every event the server holds for the writer's tenant, oldest first, read page by page. */
export async function allEvents(base: string): Promise<{ type: string; subject: string }[]> {
  const events: { type: string; subject: string }[] = [];
  for (let after: string | undefined, more = true; more; ) {
    const res = await fetch(`${base}/v1/events?limit=1000${after ? `&after=${after}` : ''}`, { headers: WRITER });
    const page = (await res.json()) as { items: { type: string; subject: string }[]; nextCursor?: string };
    events.push(...page.items);
    after = page.nextCursor;
    more = after !== undefined;
  }
  return events;
}
