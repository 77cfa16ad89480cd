/**
 * The merge thread keeps the LMDB environments the store lends it open
 * between batches (`store/lmdb-lent.ts`), and gives them back when the
 * store asks, before it swaps its file in a compaction or closes it
 * (`Store.keepLent`): lmdb-js shares one environment per path in a process,
 * so one kept open past a swap would be the one the store opened again, the
 * replaced file's, and every write after the compaction would go there.
 * Over the API, with the app's own indexer: once merges ran after a
 * compaction, nothing in the process maps the file it replaced (its space
 * goes back to the disk); and checkpoints written and merged before and
 * after it are all there, and found by their words, once the process holds
 * nothing of the store any more (its merge thread stopped) and the data
 * directory is opened again. LMDB only, whatever store the suite runs on:
 * only LMDB lends itself to the merge thread.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { MERGE_THREAD } from '../../src/service/indexer/merge-thread.js';
import { keyspaceOf } from '../../src/service/repository/keyspace.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import type { Store } from '../../src/store/store.js';
import { auth, checkpointBody, TOKENS } from '../support/app.js';

interface App {
  app: FastifyInstance;
  store: Store;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function create(t: App, taskId: string, word: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, { executionState: { completedItems: [`${word} step`] } }) });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: string }).id;
}

async function found(t: App, word: string): Promise<string[]> {
  const res = await t.app.inject({ method: 'GET', url: `/v1/checkpoints?q=${word}&limit=50`, headers: auth() });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { items: { id: string }[] }).items.map((item) => item.id).sort();
}

/** Waits until the indexer has merged the whole pending list. */
async function merged(store: Store): Promise<void> {
  const { begin, end } = keyspaceOf('default').pendingList.range();
  for (let i = 0; i < 200; i++) {
    if ((await store.transact((tx) => tx.getRange(begin, end, { limit: 1 }), { readOnly: true })).length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('The indexer did not merge the pending list within 10 s.');
}

it('leaves no mapping of the file a compaction replaced, and has every checkpoint written and merged before and after it, found by its words, once the data is opened again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-lent-environment-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const config = configSchema.parse({ dataDir: dir, tokens: `writer:${TOKENS.writer}`, logLevel: 'silent', indexerDelayMs: 0 });
  const open = async (): Promise<App> => {
    const store = LmdbStore.open({ path: dir });
    return { store, app: await buildApp({ config, store, eventPollMs: 100 }) };
  };
  const first = await open();
  let firstOpen = true;
  cleanups.push(async () => {
    if (!firstOpen) return;
    await first.app.close();
    await first.store.close();
  });
  const before: string[] = [];
  for (let n = 0; n < 4; n++) before.push(await create(first, `task-${n % 2}`, 'ptarmigan'));
  await merged(first.store);
  expect(MERGE_THREAD.available).toBe(true);
  expect(await first.store.compact()).toBe(true);
  const after: string[] = [];
  for (let n = 0; n < 4; n++) after.push(await create(first, `task-${n % 2}`, 'capercaillie'));
  await merged(first.store);
  expect(await found(first, 'capercaillie')).toEqual([...after].sort());
  // Threads share the process's mappings: the merge thread's environment is among them.
  const replaced = readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((line) => line.includes(dir) && line.endsWith('(deleted)'));
  expect(replaced).toEqual([]);
  firstOpen = false;
  await first.app.close();
  await first.store.close();
  // As a new process would: nothing of the store left open here, the merge thread's environments included.
  await MERGE_THREAD.close();

  const again = await open();
  cleanups.push(async () => {
    await again.app.close();
    await again.store.close();
  });
  for (const id of [...before, ...after]) {
    const res = await again.app.inject({ method: 'GET', url: `/v1/checkpoints/${id}`, headers: auth() });
    expect(res.statusCode, `${id}: ${res.body}`).toBe(200);
  }
  expect(await found(again, 'ptarmigan')).toEqual([...before].sort());
  expect(await found(again, 'capercaillie')).toEqual([...after].sort());
});
