/**
 * The real app over a real store (LMDB in a fresh temporary directory, or
 * FoundationDB under a fresh prefix with `BATON_TEST_STORE=fdb`: see
 * `store.ts`), for route tests through `inject` or over a socket. Each call is
 * independent; `close` removes everything it made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach } from 'vitest';
import { buildApp, type AppOptions } from '../../src/app.js';
import { configSchema, type Config } from '../../src/config.js';
import type { Store } from '../../src/store/store.js';
import { openTestStore } from './store.js';

export const TOKENS = {
  writer: 'writer-secret-0123456789abcdef',
  auditor: 'auditor-secret-0123456789abcdef',
  admin: 'admin-secret-0123456789abcdef',
  acmeWriter: 'acme-writer-secret-0123456789',
} as const;

export type Who = keyof typeof TOKENS;

export function auth(who: Who = 'writer'): { authorization: string } {
  return { authorization: `Bearer ${TOKENS[who]}` };
}

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  dir: string;
  config: Config;
  /** Opens the same data again, on LMDB or FoundationDB as the suite runs (a restart, after `store` was closed). */
  reopen(): Promise<Store>;
  /** Closes the app and the store, and removes the data directory. */
  close(): Promise<void>;
}

export async function buildTestApp(options: { config?: Partial<Config>; app?: Partial<AppOptions> } = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-app-'));
  const config = configSchema.parse({
    dataDir: dir,
    tokens: `writer:${TOKENS.writer},auditor:${TOKENS.auditor},admin:${TOKENS.admin},writer:${TOKENS.acmeWriter}:acme`,
    logLevel: 'silent',
    ...options.config,
  });
  const { store, reopen, destroy } = await openTestStore(dir);
  const app = await buildApp({ config, store, eventPollMs: 100, ...options.app });
  await app.ready();
  return {
    app,
    store,
    dir,
    config,
    reopen,
    async close() {
      await app.close();
      await destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A small valid checkpoint body for `taskId`; `extra` is merged in at the top level. */
export function checkpointBody(taskId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    taskId,
    agentId: 'agent-1',
    agentType: 'implementation',
    executionState: {
      phase: 'implementing',
      completedItems: ['wrote the parser', { description: 'added tests', files: { created: ['test/parser.test.ts'] } }],
      pendingItems: [{ id: 'p1', description: 'wire the CLI', files: { modified: [{ path: 'src/cli.ts', sha256: 'a'.repeat(64) }] } }],
      blockedItems: [],
      currentFocus: 'p1',
    },
    contextSummary: { keyDecisions: [{ decision: 'use LMDB', rationale: 'embedded, durable' }], assumptions: ['node 20'] },
    metrics: { tokensConsumed: 1200, toolsInvoked: 7, filesModified: ['src/parser.ts'], contextUtilization: 0.42 },
    recovery: { continuationPrompt: 'Continue with p1.' },
    labels: { team: 'core' },
    ...extra,
  };
}

/** A fresh app for every test of the enclosing `describe` (or file), closed after it. */
export function useTestApp(options: Parameters<typeof buildTestApp>[0] = {}): () => TestApp {
  let current: TestApp | undefined;
  beforeEach(async () => {
    current = await buildTestApp(options);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (current === undefined) throw new Error('The test app exists only inside a test.');
    return current;
  };
}

/** A clock a test moves by hand; an app built with `now: clock.now` reads it. */
export class TestClock {
  private at: number;

  constructor(private readonly start: string) {
    this.at = Date.parse(start);
  }

  readonly now = (): Date => new Date(this.at);

  /** Moves the clock forward by `ms`. */
  advance(ms: number): void {
    this.at += ms;
  }

  /** Back to the start time. */
  reset(): void {
    this.at = Date.parse(this.start);
  }
}

/** {@link useTestApp} with a {@link TestClock} the app reads, back at `start` before every test. */
export function useClockedTestApp(start: string, options: Parameters<typeof buildTestApp>[0] = {}): { app: () => TestApp; clock: TestClock } {
  const clock = new TestClock(start);
  beforeEach(() => clock.reset());
  const app = useTestApp({ ...options, app: { ...options.app, now: clock.now } });
  return { app, clock };
}


/** Resolves once `app`'s write queue is empty (`/readyz`), or fails after `timeoutMs`. */
export async function queueDrained(app: FastifyInstance, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = (await app.inject({ method: 'GET', url: '/readyz' })).json() as { queue: { depth: number } };
    if (ready.queue.depth === 0) return;
    if (Date.now() > deadline) throw new Error('The queue did not drain in time.');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
