/**
 * The merge thread makes exactly the index the event loop's merge makes:
 * random tasks' checkpoints of random words (a task's first again now and
 * then, as after a purge) wait in the pending list of two tenants of one
 * real LMDB store, in rounds; after each round one tenant's list is merged
 * by the indexer through its thread, the other's by `mergeBatch` on the
 * event loop, and the two tenants' word runs, task lists, open runs and
 * pending lists must hold the same keys and values. Then the thread's
 * writes for a batch whose entry changed after the listing are not applied:
 * the indexer leaves that task's entries for its next batch.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCheckpoint } from '../../src/domain/changes.js';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import { newId } from '../../src/domain/ids.js';
import { applyMerges } from '../../src/service/indexer/batch.js';
import { Indexer } from '../../src/service/indexer/indexer.js';
import { MergeThread } from '../../src/service/indexer/merge-thread.js';
import { runsReader } from '../../src/service/indexer/runs-apart.js';
import { keyspaceOf } from '../../src/service/repository/keyspace.js';
import { Repository, type IndexPosition } from '../../src/service/repository/repository.js';
import { toStored } from '../../src/service/repository/repository.js';
import { mergePending } from '../support/insert.js';
import { serviceHarness, type ServiceHarness } from '../service/service-context.js';

const WORDS = ['lease', 'fence', 'epoch', 'journal', 'replay', 'cursor', 'shard7', 'shard8', 'token42', 'über'];
const checkpointSpec = fc.record({
  task: fc.integer({ min: 0, max: 3 }),
  words: fc.uniqueArray(fc.constantFrom(...WORDS), { maxLength: 6 }),
  restart: fc.boolean(),
});

let harness: ServiceHarness;
let run = 0;
beforeAll(async () => {
  harness = await serviceHarness();
});
afterAll(async () => harness?.close());

/**
 * Every key and value of a tenant's full-text spaces, the tenant's own prefix
 * cut off; the word runs both in the store and kept apart (`runs-apart.ts`),
 * where the thread's merges put the runs they open.
 */
async function termSpaces(tenant: string): Promise<string[]> {
  const ks = keyspaceOf(tenant);
  const rows: string[] = [];
  for (const space of [ks.terms, ks.runEnds, ks.taskTerms, ks.openTerms, ks.pendingTerms, ks.pendingList]) {
    const { begin, end } = space.range();
    const stores = space === ks.terms ? [harness.store, harness.ctx.runsApart!.store] : [harness.store];
    const found: string[] = [];
    for (const store of stores) {
      for (const { key, value } of await store.transact((tx) => tx.getRange(begin, end), { readOnly: true })) {
        found.push(`${key.subarray(space.prefix.length).toString('hex')}=${value.toString('hex')}`);
      }
    }
    rows.push(...found.sort());
  }
  return rows;
}

/** An indexer that merges only when told to (`settle`): no sweep of its own in the middle of a round. */
const toldIndexer = () => new Indexer(harness.ctx, 0, 3_600_000);

it('merges on its thread exactly as the event loop does, round after round', { timeout: 120_000 }, async () => {
  const indexer = toldIndexer();
  indexer.start();
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(checkpointSpec, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }), async (rounds) => {
        const id = run++;
        const [threaded, here] = [`thread-${id}`, `here-${id}`];
        const newest = new Map<string, IndexPosition | undefined>();
        let minute = 0;
        for (const round of rounds) {
          for (const spec of round) {
            const taskId = `task-${spec.task}`;
            const input = checkpointInput.parse({ taskId, agentId: 'agent-1', executionState: { completedItems: [spec.words.join(' ')] } });
            const checkpoint = buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1, 0, minute++)).toISOString());
            const previous = spec.restart ? undefined : newest.get(taskId);
            // The same checkpoint in both tenants, left in their pending lists.
            for (const tenant of [threaded, here]) {
              await harness.store.transact((tx) => new Repository(tx, tenant).checkpoints.insert(checkpoint, toStored(checkpoint).stored, minute, previous));
            }
            newest.set(taskId, { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id });
          }
          // The event loop's tenant first, so that the indexer finds only the thread's tenant left to merge.
          await mergePending(harness.store, here);
          const before = indexer.figures().onThread;
          await indexer.settle();
          expect(indexer.figures().onThread - before).toBe(round.length);
          expect(await termSpaces(threaded)).toEqual(await termSpaces(here));
        }
      }),
      { numRuns: 25 },
    );
  } finally {
    await indexer.stop();
  }
});

it('does not apply a task’s writes when an entry changed after the listing, and merges it at the next batch', async () => {
  const tenant = `changed-${run++}`;
  const thread = new MergeThread();
  try {
    const at: IndexPosition[] = [];
    const checkpoints = ['lease fence', 'fence epoch'].map((text, i) => buildCheckpoint(checkpointInput.parse({ taskId: 'task-a', agentId: 'agent-1', executionState: { completedItems: [text] } }), newId(), new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString()));
    const other = buildCheckpoint(checkpointInput.parse({ taskId: 'task-b', agentId: 'agent-1', executionState: { completedItems: ['journal'] } }), newId(), new Date(Date.UTC(2025, 0, 1, 1)).toISOString());
    await harness.store.transact(async (tx) => {
      const repo = new Repository(tx, tenant);
      for (const [i, checkpoint] of checkpoints.entries()) {
        await repo.checkpoints.insert(checkpoint, toStored(checkpoint).stored, i + 1, at[i - 1]);
        at.push({ createdAt: checkpoint.createdAt, checkpointId: checkpoint.id });
      }
      await repo.checkpoints.insert(other, toStored(other).stored, 1, undefined);
    });
    const listed = await harness.store.transact(async (tx) => {
      const terms = new Repository(tx, tenant).terms;
      const entries = await terms.pending.rows(100);
      const open = new Map([['task-a', await terms.openRunsRow('task-a')], ['task-b', await terms.openRunsRow('task-b')]]);
      return { entries, open };
    }, { readOnly: true });
    const merges = (await thread.merge(tenant, listed.entries, [...listed.open.values()]))!;
    expect(merges.map((merge) => merge.taskId)).toEqual(['task-a', 'task-b']);
    // task-a's newest checkpoint changed its words after the listing: its entry is rewritten.
    await harness.store.transact(async (tx) => {
      const pending = new Repository(tx, tenant).terms.pending;
      pending.rewrite((await pending.get('task-a', at[1]!))!, ['fence', 'cursor']);
    });
    expect(await harness.store.transact((tx) => applyMerges(tx, merges, listed.entries, listed.open))).toBe(1);
    const left = await harness.store.transact((tx) => new Repository(tx, tenant).terms.pending.list(100), { readOnly: true });
    expect(left.entries.map((entry) => [entry.taskId, entry.words])).toEqual([
      ['task-a', ['lease', 'fence']],
      ['task-a', ['fence', 'cursor']],
    ]);
    // The next batch merges them as they are now.
    expect(await mergePending(harness.store, tenant)).toBe(2);
    const runs = await harness.store.transact((tx) => new Repository(tx, tenant, undefined, runsReader(harness.ctx)).terms.runs('cursor', 10), { readOnly: true });
    expect(runs).toEqual([{ taskId: 'task-a', start: at[1], last: undefined }]);
  } finally {
    await thread.close();
  }
});

it('merges a backlog whose merge would pass a store transaction’s 10,000,000 bytes in batches that each fit, on the thread and on the event loop', { timeout: 120_000 }, async () => {
  const id = run++;
  const [threaded, here] = [`big-thread-${id}`, `big-here-${id}`];
  // 100 checkpoints of one task, each with 900 words of its own: merged at once, ~90,000 runs started and ~90,000 ended.
  let previous: IndexPosition | undefined;
  for (let n = 0; n < 100; n++) {
    const text = Array.from({ length: 900 }, (_, i) => `w${i}x${n}`).join(' ');
    const checkpoint = buildCheckpoint(checkpointInput.parse({ taskId: 'big', agentId: 'agent-1', executionState: { completedItems: [text] } }), newId(), new Date(Date.UTC(2025, 0, 1, 0, n)).toISOString());
    for (const tenant of [threaded, here]) await harness.store.transact((tx) => new Repository(tx, tenant).checkpoints.insert(checkpoint, toStored(checkpoint).stored, n + 1, previous));
    previous = { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id };
  }
  await mergePending(harness.store, here);
  const indexer = toldIndexer();
  indexer.start();
  try {
    await indexer.settle();
    expect(indexer.figures()).toMatchObject({ onThread: 100 });
    expect(indexer.figures().batches).toBeGreaterThan(1);
  } finally {
    await indexer.stop();
  }
  expect(await termSpaces(threaded)).toEqual(await termSpaces(here));
  const runs = await harness.store.transact((tx) => new Repository(tx, threaded, undefined, runsReader(harness.ctx)).terms.runs('w899x99', 10), { readOnly: true });
  expect(runs).toEqual([{ taskId: 'big', start: previous, last: undefined }]);
});
