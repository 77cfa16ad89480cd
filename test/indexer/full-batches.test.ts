/**
 * Under load the indexer merges full batches only: a merge costs about as
 * much for a few entries as for a batch of them (a listing, the merge
 * thread's round trip, a transaction and its commit), so a poke merges once
 * a full batch waits, and what is left of a batch waits for the next full
 * one, the poke's delay or the sweep; `settle` (and a sweep) merge it all.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCheckpoint } from '../../src/domain/changes.js';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import { newId } from '../../src/domain/ids.js';
import { Indexer } from '../../src/service/indexer/indexer.js';
import { runsReader } from '../../src/service/indexer/runs-apart.js';
import { MERGE_BATCH } from '../../src/service/indexer/limits.js';
import { Repository, toStored, type IndexPosition } from '../../src/service/repository/repository.js';
import { serviceHarness, type ServiceHarness } from '../service/service-context.js';

let harness: ServiceHarness;
beforeAll(async () => {
  harness = await serviceHarness();
});
afterAll(async () => harness?.close());

const LEFT_OVER = 44;

async function pendingCount(tenant: string): Promise<number> {
  return harness.store.transact(async (tx) => (await new Repository(tx, tenant).terms.pending.list(10 * MERGE_BATCH)).entries.length, { readOnly: true });
}

it('merges a full batch as soon as one waits, and leaves fewer than a batch for the delay or the sweep', { timeout: 60_000 }, async () => {
  // Neither the poke's delay nor the sweep comes round during the test: only a full batch starts a merge.
  const indexer = new Indexer(harness.ctx, 3_600_000, 3_600_000);
  indexer.start();
  try {
    // Run once, so that this instance holds the duty and counts its backlog from now on.
    await indexer.settle();
    const tenant = 'full-batches';
    const newest = new Map<string, IndexPosition>();
    const total = MERGE_BATCH + LEFT_OVER;
    for (let i = 0; i < total; i++) {
      const taskId = `task-${i % 20}`;
      const input = checkpointInput.parse({ taskId, agentId: 'agent-1', executionState: { completedItems: [`lease fence step${i}`] } });
      const checkpoint = buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1, 0, 0, 0, i)).toISOString());
      await harness.store.transact((tx) => new Repository(tx, tenant).checkpoints.insert(checkpoint, toStored(checkpoint).stored, i + 1, newest.get(taskId)));
      newest.set(taskId, { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id });
    }
    const before = indexer.figures();
    for (let i = 0; i < MERGE_BATCH - 1; i++) indexer.poke();
    // One short of a batch: nothing merges.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(indexer.figures().merged).toBe(before.merged);
    for (let i = MERGE_BATCH - 1; i < total; i++) indexer.poke();
    const deadline = Date.now() + 20_000;
    while (indexer.figures().merged < before.merged + MERGE_BATCH && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    // Let the pass finish: it must stop at the batch that is not full.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(indexer.figures().merged - before.merged).toBe(MERGE_BATCH);
    expect(indexer.figures().backlog).toBe(LEFT_OVER);
    expect(await pendingCount(tenant)).toBe(LEFT_OVER);

    await indexer.settle();
    expect(indexer.figures().merged - before.merged).toBe(total);
    expect(await pendingCount(tenant)).toBe(0);
    const runs = await harness.store.transact((tx) => new Repository(tx, tenant, undefined, runsReader(harness.ctx)).terms.runs('lease', 100), { readOnly: true });
    expect(new Set(runs?.map((run) => run.taskId))).toEqual(new Set(Array.from({ length: 20 }, (_, i) => `task-${i}`)));
  } finally {
    await indexer.stop();
  }
});
