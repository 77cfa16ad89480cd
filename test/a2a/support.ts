/**
 * What the A2A tests share: a real Baton (the app over LMDB in a temporary
 * directory, on a real socket) and the Baton counterparts of what the SDK's
 * database tests do to their SQL table: read its rows, write a row the store
 * itself would never write, and damage one as a disk fault would.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { BatonTaskStore, type BatonTaskStoreOptions } from '../../src/a2a/index.js';
import type { BatonClient, Checkpoint } from '../../src/client/index.js';
import { listen, type Listening } from '../client/support/server.js';
import { corruptCheckpoint } from '../support/corrupt.js';

export type Baton = Listening;

/** The SDK's page size when a request names none (its src/constants.ts, which the package does not export). */
export const DEFAULT_PAGE_SIZE = 50;

export function startBaton(): Promise<Baton> {
  return listen();
}

/** A new client, as a new connection (or a restarted process) would have. */
export function connect(baton: Baton): BatonClient {
  return baton.client();
}

/** The task checkpoints of the store whose task prefix is `prefix`, newest first. */
async function checkpoints(baton: Baton, prefix: string): Promise<Checkpoint[]> {
  const found: Checkpoint[] = [];
  let cursor: string | undefined;
  do {
    const page = await baton.client().checkpoints.search({ labels: { 'a2a.kind': 'task' }, limit: 1000, ...(cursor ? { cursor } : {}) });
    found.push(...page.items.filter((doc) => doc.taskId === prefix + String(doc.labels['a2a.id'])));
    cursor = page.nextCursor;
  } while (cursor);
  return found;
}

/** Each caller's copy of a task as the row the SDK's table would hold for it, its columns read from the checkpoint. */
export async function rowsInTable(baton: Baton, prefix: string): Promise<Record<string, unknown>[]> {
  return (await checkpoints(baton, prefix)).map((doc) => {
    const [tenant, owner] = JSON.parse(String(doc.labels['a2a.scope'])) as [string, string];
    return {
      tenant,
      owner,
      id: doc.labels['a2a.id'],
      context_id: doc.labels['a2a.context'],
      status_state: doc.labels['a2a.state'] ?? null,
      status_last_updated: doc.labels['a2a.updated'],
      protocol_version: doc.labels['a2a.protocol'],
    };
  });
}

/** Another writer than the store leaves every task with only its key (its id and context id). */
export async function keepOnlyTheKeys(baton: Baton, prefix: string): Promise<void> {
  const client = baton.client();
  for (const doc of await checkpoints(baton, prefix)) {
    const task = JSON.stringify({ id: doc.labels['a2a.id'], contextId: doc.labels['a2a.context'] });
    await client.checkpoints.patch(doc.id, { extensions: { a2a: { task } } }, { ifMatch: doc.version });
  }
}

/** Changes the stored bytes of a task's checkpoint behind Baton's back, keeping the old hash, as a disk fault would. */
export async function corruptTask(baton: Baton, prefix: string, taskId: string): Promise<void> {
  const [doc] = (await checkpoints(baton, prefix)).filter((found) => found.labels['a2a.id'] === taskId);
  if (doc === undefined) throw new Error(`No checkpoint holds A2A task ${taskId}.`);
  await corruptCheckpoint(baton.t.store, doc);
}

let shared: Baton | undefined;

/** One Baton server for the whole file, started before its first test and closed after its last. */
export function useBatonForFile(): void {
  beforeAll(async () => {
    shared = await startBaton();
  });
  afterAll(async () => {
    await shared?.close();
    shared = undefined;
  });
}

/**
 * A BatonTaskStore of its own on the file's server: a fresh task prefix
 * keeps each test's tasks apart from the others', as a new in-memory store
 * would.
 */
export function batonTaskStore(options: Partial<BatonTaskStoreOptions> = {}): BatonTaskStore {
  if (shared === undefined) throw new Error('The Baton server exists only while the file runs.');
  return new BatonTaskStore({ client: shared.client(), taskPrefix: `${randomUUID()}:`, ...options });
}
