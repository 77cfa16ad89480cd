/**
 * Word runs apart (`service/indexer/runs-apart.ts`): over LMDB the runs the
 * merge thread opens are committed to the store's companion environment
 * (`runs/` in the data directory), before the merge's own transaction.
 * Over the API, with the app's own indexer: every checkpoint is found by
 * each of its words before its merge and after it, the merged runs are in
 * the companion and not in the store, a purge clears its task's runs there,
 * runs an earlier release merged beside the rest are found with those
 * apart, a tenant with encryption has its runs merged apart under blinded
 * words, and, turned off, the runs apart are still found while merges write
 * beside the rest; and a run apart that its merge never applied (a crash between the
 * two commits) changes no answer.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { keyspaceOf } from '../../src/service/repository/keyspace.js';
import type { Store } from '../../src/store/store.js';
import { mergePending } from '../support/insert.js';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../support/app.js';

const WORDS = ['lease', 'fence', 'epoch', 'journal', 'replay', 'cursor', 'shard', 'token'];
/** The words of checkpoint `n` of a task: three, one of them moved on at each step, as an agent's text moves. */
const wordsOf = (task: number, n: number): string[] => [WORDS[(task + n) % WORDS.length]!, WORDS[(task * 3 + Math.floor(n / 2)) % WORDS.length]!, `step${n % 4}`];

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp({ config: { indexerDelayMs: 0 } });
});
afterEach(async () => t?.close());

async function create(taskId: string, words: string[]): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, { executionState: { completedItems: [words.join(' ')] } }) });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: string }).id;
}

/** Every checkpoint a search for `word` finds, page by page. */
async function found(word: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const res = await t.app.inject({ method: 'GET', url: `/v1/checkpoints?q=${word}&limit=5${cursor ? `&cursor=${cursor}` : ''}`, headers: auth() });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { items: { id: string }[]; nextCursor?: string };
    ids.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return ids;
}

/** The keys of the tenant's word runs in `store`. */
async function runKeys(store: Store, tenant = 'default'): Promise<Buffer[]> {
  const { begin, end } = keyspaceOf(tenant).terms.range();
  return (await store.transact((tx) => tx.getRange(begin, end), { readOnly: true })).map((row) => row.key);
}

const companion = (): Store => t.store.companion!('runs');

/** Waits until the indexer has merged the tenant's whole pending list. */
async function merged(tenant = 'default'): Promise<void> {
  const { begin, end } = keyspaceOf(tenant).pendingList.range();
  for (let i = 0; i < 200; i++) {
    if ((await t.store.transact((tx) => tx.getRange(begin, end, { limit: 1 }), { readOnly: true })).length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('The indexer did not merge the pending list within 10 s.');
}

/** Creates `count` checkpoints of each of `tasks`, in turns; answers which hold each word. */
async function write(tasks: string[], count: number, holding: Map<string, string[]> = new Map()): Promise<Map<string, string[]>> {
  for (let n = 0; n < count; n++) {
    for (const [i, taskId] of tasks.entries()) {
      const words = wordsOf(i, n);
      const id = await create(taskId, words);
      for (const word of new Set(words)) holding.set(word, [...(holding.get(word) ?? []), id]);
    }
  }
  return holding;
}

async function expectFound(holding: Map<string, string[]>): Promise<void> {
  for (const [word, ids] of holding) expect((await found(word)).sort(), word).toEqual([...ids].sort());
}

describe('word runs apart', () => {
  it('are where the merge thread puts a checkpoint’s runs, and search finds it by each word before and after its merge', async () => {
    const holding = await write(['apart-a', 'apart-b', 'apart-c'], 6);
    await expectFound(holding);
    await merged();
    expect((await runKeys(companion())).length).toBeGreaterThan(0);
    expect(await runKeys(t.store)).toEqual([]);
    await expectFound(holding);
  });

  it('are cleared with their task by a purge', async () => {
    const holding = await write(['kept', 'purged'], 5);
    await merged();
    const purgedIds = new Set((await t.app.inject({ method: 'GET', url: '/v1/tasks/purged/checkpoints?limit=100', headers: auth() })).json().items.map((item: { id: string }) => item.id));
    const { terms } = keyspaceOf('default');
    const ofPurged = async () => (await runKeys(companion())).filter((key) => terms.unpack(key)[1] === 'purged');
    expect((await ofPurged()).length).toBeGreaterThan(0);
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/tasks/purged', headers: auth('admin') })).statusCode).toBe(204);
    expect(await ofPurged()).toEqual([]);
    for (const [word, ids] of holding) holding.set(word, ids.filter((id) => !purgedIds.has(id)));
    await expectFound(holding);
  });

  it('are found beside the runs an earlier release merged in the store itself', async () => {
    // Merged on the event loop, in the store's own transaction: where every run was before runs went apart.
    const holding = await write(['old-a', 'old-b'], 4);
    expect(await mergePending(t.store, 'default')).toBeGreaterThan(0);
    expect((await runKeys(t.store)).length).toBeGreaterThan(0);
    await write(['old-a', 'old-b'], 4, holding);
    await merged();
    expect((await runKeys(companion())).length).toBeGreaterThan(0);
    await expectFound(holding);
  });

  it('hold a sealed tenant’s runs under blinded words, and search finds them', async () => {
    await t.close();
    const keyFile = join(mkdtempSync(join(tmpdir(), 'baton-keys-')), 'keys');
    writeFileSync(keyFile, `k1:${randomBytes(32).toString('base64')}\n`);
    t = await buildTestApp({ config: { indexerDelayMs: 0, encryptionKeyFile: keyFile } });
    const holding = await write(['sealed-a', 'sealed-b'], 5);
    await expectFound(holding);
    await merged();
    const words = (await runKeys(companion())).map((key) => keyspaceOf('default').terms.unpack(key)[0] as string);
    expect(words.length).toBeGreaterThan(0);
    expect(words.every((word) => word.startsWith('~'))).toBe(true);
    expect(await runKeys(t.store)).toEqual([]);
    await expectFound(holding);
    rmSync(dirname(keyFile), { recursive: true, force: true });
  });

  it('turned off, are still found, and merges write their runs beside the rest', async () => {
    const holding = await write(['off-a', 'off-b'], 4);
    await merged();
    const apart = (await runKeys(companion())).length;
    expect(apart).toBeGreaterThan(0);
    // The same store, the service started again with the runs' environment off.
    await t.app.close();
    const app = await buildApp({ config: { ...t.config, wordRunsApart: 'off' }, store: t.store, eventPollMs: 100 });
    await app.ready();
    t.app = app;
    try {
      await expectFound(holding);
      await write(['off-a', 'off-b'], 4, holding);
      await merged();
      expect((await runKeys(t.store)).length).toBeGreaterThan(0);
      expect((await runKeys(companion())).length).toBe(apart);
      await expectFound(holding);
    } finally {
      await app.close();
    }
  });

  it('that a merge wrote and never applied (a crash between the two commits) change no answer', async () => {
    const holding = await write(['crash-a', 'crash-b'], 4);
    const { terms } = keyspaceOf('default');
    // Runs apart for a word no checkpoint of the task holds, and for checkpoints still in the pending list.
    const pending = (await t.app.inject({ method: 'GET', url: '/v1/tasks/crash-a/checkpoints?limit=100', headers: auth() })).json().items as { id: string; createdAt: string }[];
    const open = Buffer.from([0x90]);
    await companion().transact(async (tx) => {
      for (const { id, createdAt } of pending) {
        tx.set(terms.pack('lease', 'crash-a', createdAt, id), open);
        tx.set(terms.pack('zebra', 'crash-a', createdAt, id), open);
      }
    });
    await expectFound(holding);
    expect(await found('zebra')).toEqual([]);
    await merged();
    await expectFound(holding);
  });
});
