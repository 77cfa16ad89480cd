/**
 * The real app over a real LMDB store in a temporary directory, listening on
 * 127.0.0.1, for driving it through the client over a real socket.
 */
import { BatonClient, type BatonClientOptions, type CheckpointInput } from '../../../src/client/index.js';
import type { Config } from '../../../src/config.js';
import { buildTestApp, TOKENS, type TestApp, type Who } from '../../support/app.js';

export interface Listening {
  t: TestApp;
  url: string;
  /** A client with `who`'s token; fast retries so tests that retry stay quick. */
  client(options?: Partial<BatonClientOptions> & { who?: Who }): BatonClient;
  close(): Promise<void>;
}

/** Waits short enough that a test with a few retries stays fast, long enough to be a real wait. */
export const FAST_BACKOFF = { baseMs: 5, maxMs: 50 };

export async function listen(config: Partial<Config> = {}): Promise<Listening> {
  const t = await buildTestApp({ config });
  const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    t,
    url,
    client: ({ who = 'writer', ...options } = {}) => new BatonClient({ baseUrl: url, token: TOKENS[who], backoff: FAST_BACKOFF, timeoutMs: 10_000, ...options }),
    async close() {
      // fetch keeps idle keep-alive connections (and a spare one beside each stream) open for seconds; the test is over.
      t.app.server.closeAllConnections();
      await t.close();
    },
  };
}

/** A small checkpoint body for `taskId` written by `agentId`. */
export function work(taskId: string, agentId: string, extra: Partial<CheckpointInput> = {}): CheckpointInput {
  return {
    taskId,
    agentId,
    agentType: 'implementation',
    executionState: { phase: 'implementing', completedItems: ['read the issue'], pendingItems: ['write the parser'], currentFocus: 'write the parser' },
    contextSummary: { keyDecisions: [{ decision: 'parse with a state machine', rationale: 'the grammar is regular' }] },
    recovery: { continuationPrompt: 'Continue with the parser.' },
    ...extra,
  };
}

/** Polls `check` every 10 ms; fails naming `what` after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
