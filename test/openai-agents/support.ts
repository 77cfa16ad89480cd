/**
 * What the OpenAI Agents tests share: a real Baton (the app over LMDB in a
 * temporary directory, on a real socket) started fresh for every test, so
 * each test's sessions begin as tasks that never existed, and BatonSessions
 * over it.
 */
import type { AgentInputItem } from '@openai/agents-core';
import { afterEach, beforeEach } from 'vitest';
import { BatonSession, type Logger } from '../../src/openai-agents/index.js';
import { listen, type Listening } from '../client/support/server.js';

let current: Listening | undefined;

/** Starts a Baton server before each test of the file and closes it after. */
export function batonServerPerTest(): void {
  beforeEach(async () => {
    current = await listen();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
}

/** The server of the running test. */
export function server(): Listening {
  if (current === undefined) throw new Error('The Baton server exists only inside a test.');
  return current;
}

/**
 * A BatonSession over the test's server. The SDK's MemorySession takes
 * `initialItems`; a BatonSession reads its history from Baton, so the
 * items are added to it once it exists, as an application would.
 */
export async function batonSession(options: { sessionId?: string; initialItems?: AgentInputItem[]; logger?: Logger } = {}): Promise<BatonSession> {
  const session = new BatonSession({
    client: server().client(),
    ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  if (options.initialItems !== undefined && options.initialItems.length > 0) await session.addItems(options.initialItems);
  return session;
}
