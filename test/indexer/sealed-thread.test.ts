/**
 * A tenant with encryption at rest is merged on the merge thread, which
 * never holds the tenant's key (`KEYLESS` in `merge-rows.ts`): its pending
 * entries and open runs are blind already, so the thread's merge is the
 * event loop's. Over a real store, through the API: the app's indexer sends
 * a sealed tenant's batches to the thread; the thread's writes for
 * a sealed tenant's batch hold no plain word, applied they make every
 * checkpoint found by each of its words; a batch holding words written
 * before encryption was on comes back unmerged (the indexer merges it on
 * the event loop, with the key).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { applyMerges } from '../../src/service/indexer/batch.js';
import { MERGE_THREAD, MergeThread } from '../../src/service/indexer/merge-thread.js';
import { keyspaceOf } from '../../src/service/repository/keyspace.js';
import { Repository } from '../../src/service/repository/repository.js';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../support/app.js';

const WORDS = ['lease', 'fence', 'epoch', 'journal', 'replay', 'cursor'];

let keys: string;
let keyFile: string;
let t: TestApp | undefined;
const thread = new MergeThread();
beforeAll(() => {
  keys = mkdtempSync(join(tmpdir(), 'sealed-thread-keys-'));
  keyFile = join(keys, 'keys');
  writeFileSync(keyFile, `k1:${randomBytes(32).toString('base64')}\n`);
});
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(async () => {
  await thread.close();
  rmSync(keys, { recursive: true, force: true });
});

/** Checkpoint `n` of each task, its words moving on as an agent's text does; which ids hold each word. */
async function write(app: TestApp['app'], tasks: string[], count: number, holding = new Map<string, string[]>()): Promise<Map<string, string[]>> {
  for (let n = 0; n < count; n++) {
    for (const [i, taskId] of tasks.entries()) {
      const words = [WORDS[(i + n) % WORDS.length]!, WORDS[(i * 2 + Math.floor(n / 2)) % WORDS.length]!];
      const res = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, { executionState: { completedItems: [words.join(' ')] } }) });
      expect(res.statusCode, res.body).toBe(201);
      const { id } = res.json() as { id: string };
      for (const word of new Set(words)) holding.set(word, [...(holding.get(word) ?? []), id]);
    }
  }
  return holding;
}

/** The tenant's pending entries and their tasks' open runs, as the indexer lists them. */
async function listed(store: TestApp['store']) {
  return store.transact(
    async (tx) => {
      const terms = new Repository(tx, 'default').terms;
      const entries = await terms.pending.rows(256);
      const tasks = [...new Set(entries.map((row) => terms.pending.positionOf(row.key)[0]))];
      const open = new Map(await Promise.all(tasks.map(async (taskId) => [taskId, await terms.openRunsRow(taskId)] as const)));
      return { entries, open };
    },
    { readOnly: true },
  );
}

async function found(app: TestApp['app'], word: string): Promise<string[]> {
  const res = await app.inject({ method: 'GET', url: `/v1/checkpoints?q=${word}&limit=100`, headers: auth() });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { items: { id: string }[] }).items.map((item) => item.id).sort();
}

describe('a sealed tenant on the merge thread', () => {
  it('is merged there with blind words only, and every checkpoint is found by each of its words', async () => {
    t = await buildTestApp({ config: { indexer: 'off', encryptionKeyFile: keyFile } });
    const holding = await write(t.app, ['sealed-a', 'sealed-b', 'sealed-c'], 6);
    const { entries, open } = await listed(t.store);
    expect(entries).toHaveLength(18);
    const merges = await thread.merge('default', entries, [...open.values()], true);
    expect(merges).toBeDefined();
    const { terms, taskTerms, openTerms } = keyspaceOf('default');
    const written = merges!.flatMap((merge) => merge.writes).filter((write) => write.value !== null);
    const runWords = written.filter((write) => terms.contains(write.key)).map((write) => terms.unpack(write.key)[0] as string);
    expect(runWords.length).toBeGreaterThan(0);
    expect(runWords.every((word) => word.startsWith('~'))).toBe(true);
    for (const write of written.filter((w) => taskTerms.contains(w.key) || openTerms.contains(w.key))) {
      for (const word of WORDS) expect(write.value!.includes(Buffer.from(word)), word).toBe(false);
    }
    expect(await t.store.transact((tx) => applyMerges(tx, merges!, entries, open))).toBe(18);
    expect(await listed(t.store)).toMatchObject({ entries: [] });
    for (const [word, ids] of holding) expect(await found(t.app, word), word).toEqual([...ids].sort());
  });

  it('is what the app\'s indexer does with a sealed tenant\'s batches', async () => {
    // Over LMDB the thread lists and commits the batch itself (`prepare`, `apply`); elsewhere its writes come back (`merge`).
    const merge = vi.spyOn(MERGE_THREAD, 'merge');
    const prepare = vi.spyOn(MERGE_THREAD, 'prepare');
    try {
      t = await buildTestApp({ config: { indexerDelayMs: 0, encryptionKeyFile: keyFile } });
      const holding = await write(t.app, ['sealed-a', 'sealed-b'], 5);
      for (let i = 0; i < 200 && (await listed(t.store)).entries.length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await listed(t.store)).entries).toEqual([]);
      const sealedCalls = [...merge.mock.calls.filter((call) => call[3] === true), ...prepare.mock.calls.filter((call) => call[0].sealed)];
      expect(sealedCalls.length).toBeGreaterThan(0);
      for (const result of merge.mock.results) expect(await result.value).toBeDefined();
      for (const result of prepare.mock.results) expect((await result.value).state).not.toBe('keyNeeded');
      for (const [word, ids] of holding) expect(await found(t.app, word), word).toEqual([...ids].sort());
    } finally {
      merge.mockRestore();
      prepare.mockRestore();
    }
  });

  it('hands back a batch holding words written before encryption was on', async () => {
    t = await buildTestApp({ config: { indexer: 'off' } });
    await write(t.app, ['plain-a'], 2);
    await t.app.close();
    t.app = await buildApp({ config: { ...t.config, encryptionKeyFile: keyFile }, store: t.store });
    await t.app.ready();
    await write(t.app, ['plain-a'], 2);
    const { entries, open } = await listed(t.store);
    expect(entries).toHaveLength(4);
    expect(await thread.merge('default', entries, [...open.values()], true)).toBeUndefined();
    // The same rows of a tenant without encryption: merged.
    expect(await thread.merge('default', entries, [...open.values()], false)).toBeDefined();
  });
});
