/**
 * The full-text pending list in the order checkpoints are made (store
 * format 5, `repository/pending-terms.ts`): a create appends where the ones
 * before it did, whatever its task, and a store that format 4 left with
 * entries kept by task (`tp`) has them found by search, merged and cleared
 * beside the new ones, each task's in its own order.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCheckpoint } from '../../src/domain/changes.js';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import { newId } from '../../src/domain/ids.js';
import { Indexer } from '../../src/service/indexer/indexer.js';
import { runsReader } from '../../src/service/indexer/runs-apart.js';
import { codecsFor } from '../../src/service/repository/codec.js';
import { keyspaceOf } from '../../src/service/repository/keyspace.js';
import { Repository, toStored, type IndexPosition } from '../../src/service/repository/repository.js';
import type { Transaction } from '../../src/store/store.js';
import { serviceHarness, type ServiceHarness } from '../service/service-context.js';

let harness: ServiceHarness;
beforeAll(async () => {
  harness = await serviceHarness();
});
afterAll(async () => harness?.close());

const TASKS = 5;
const PER_TASK = 6;

async function rowsOf(tenant: string, space: 'pendingTerms' | 'pendingList'): Promise<Buffer[]> {
  const { begin, end } = keyspaceOf(tenant)[space].range();
  return (await harness.store.transact((tx) => tx.getRange(begin, end), { readOnly: true })).map((row) => row.key);
}

/** Creates PER_TASK checkpoints in each of TASKS tasks, the tasks taking turns; the word `step<i>` in each, `shared` in all. */
async function createTurns(tenant: string, from: number): Promise<string[]> {
  const newest = new Map<string, IndexPosition>();
  const ids: string[] = [];
  for (let i = from; i < from + TASKS * PER_TASK; i++) {
    const taskId = `task-${i % TASKS}`;
    const input = checkpointInput.parse({ taskId, agentId: 'agent-1', executionState: { completedItems: [`shared step${i}`] } });
    const checkpoint = buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1, 0, 0, 0, i)).toISOString());
    await harness.store.transact(async (tx) => {
      const repo = new Repository(tx, tenant);
      await repo.checkpoints.insert(checkpoint, toStored(checkpoint).stored, i + 1, newest.get(taskId) ?? (await previousOf(tx, tenant, taskId)));
    });
    newest.set(taskId, { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id });
    ids.push(checkpoint.id);
  }
  return ids;
}

/** The task's newest checkpoint so far, by its `task` index. */
async function previousOf(tx: Transaction, tenant: string, taskId: string): Promise<IndexPosition | undefined> {
  const [hit] = await new Repository(tx, tenant).index.scan('task', taskId, { limit: 1 });
  return hit === undefined ? undefined : { createdAt: hit.createdAt, checkpointId: hit.checkpointId };
}

async function searchIds(tenant: string, word: string): Promise<string[]> {
  return harness.store.transact(async (tx) => {
    const repo = new Repository(tx, tenant, undefined, runsReader(harness.ctx));
    const entries = (await repo.terms.waiting(10_000)) ?? [];
    const runs = (await repo.terms.runs(word, 10_000)) ?? [];
    const pending = entries.filter((entry) => entry.words.includes(word)).map((entry) => entry.at.checkpointId);
    return [...pending, ...runs.map((run) => `${run.taskId}@${run.start.checkpointId}`)];
  }, { readOnly: true });
}

it('appends each create in the order checkpoints are made, whatever the task', async () => {
  const tenant = 'list-order';
  const ids = await createTurns(tenant, 0);
  const keys = await rowsOf(tenant, 'pendingList');
  const repo = (tx: Transaction) => new Repository(tx, tenant);
  const listed = await harness.store.transact(async (tx) => (await repo(tx).terms.pending.list(1_000)).entries, { readOnly: true });
  expect(listed.map((entry) => entry.at.checkpointId)).toEqual(ids);
  expect(keys).toHaveLength(ids.length);
  expect(await rowsOf(tenant, 'pendingTerms')).toEqual([]);
});

it('finds, merges and clears what format 4 left in the list kept by task, with the entries made after it', { timeout: 60_000 }, async () => {
  const tenant = 'format-4-list';
  const ks = keyspaceOf(tenant);
  const codecs = codecsFor(undefined);
  const before = await createTurns(tenant, 0);
  // As format 4 kept them: each entry under (taskId, createdAt, checkpointId), the same value.
  await harness.store.transact(async (tx) => {
    const { begin, end } = ks.pendingList.range();
    for (const { key, value } of await tx.getRange(begin, end)) {
      const [createdAt, checkpointId, taskId] = ks.pendingList.unpack(key) as [string, string, string];
      tx.clear(key);
      tx.set(ks.pendingTerms.pack(taskId, createdAt, checkpointId), codecs.pendingTerms.encode(codecs.pendingList.decode(value, Buffer.alloc(0)), Buffer.alloc(0)));
    }
  });
  expect(await rowsOf(tenant, 'pendingTerms')).toHaveLength(before.length);
  expect(await rowsOf(tenant, 'pendingList')).toEqual([]);
  const after = await createTurns(tenant, TASKS * PER_TASK);
  expect(await rowsOf(tenant, 'pendingList')).toHaveLength(after.length);

  // Waiting in either list, every checkpoint is found by its word.
  expect((await searchIds(tenant, 'shared')).sort()).toEqual([...before, ...after].sort());
  expect(await searchIds(tenant, `step${3}`)).toEqual([before[3]]);

  const indexer = new Indexer(harness.ctx, 3_600_000, 3_600_000);
  indexer.start();
  try {
    await indexer.settle();
  } finally {
    await indexer.stop();
  }
  expect(await rowsOf(tenant, 'pendingTerms')).toEqual([]);
  expect(await rowsOf(tenant, 'pendingList')).toEqual([]);
  // Merged in each task's order: one run of `shared` a task, open, from its first checkpoint.
  const shared = await harness.store.transact((tx) => new Repository(tx, tenant, undefined, runsReader(harness.ctx)).terms.runs('shared', 100), { readOnly: true });
  expect(shared?.map((run) => [run.taskId, run.start.checkpointId, run.last])).toEqual(
    Array.from({ length: TASKS }, (_, t) => [`task-${t}`, before[t], undefined]),
  );
  // Each step word is a run of one checkpoint, closed at it, or open at the task's newest.
  for (const [i, id] of [...before, ...after].entries()) {
    const runs = await harness.store.transact((tx) => new Repository(tx, tenant, undefined, runsReader(harness.ctx)).terms.runs(`step${i}`, 10), { readOnly: true });
    expect(runs?.map((run) => run.start.checkpointId), `step${i}`).toEqual([id]);
    const newestOfTask = i >= 2 * TASKS * PER_TASK - TASKS;
    expect(runs?.[0]?.last === undefined, `step${i}`).toBe(newestOfTask);
  }
});
