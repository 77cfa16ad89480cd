/**
 * The mark that tells the indexer a tenant has entries waiting (the system
 * space `termsDue`; over FoundationDB the tenant's count, `termsPending`): every create sets it unless it is set already, the
 * indexer clears it once it finds the tenant's list empty, and the next
 * create sets it again, so its entry is merged. A create that left it unset
 * would wait unmerged until another create of its tenant came.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCheckpoint } from '../../src/domain/changes.js';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import { newId } from '../../src/domain/ids.js';
import { Indexer } from '../../src/service/indexer/indexer.js';
import { Repository, tenantsWithPendingTerms, toStored, type IndexPosition } from '../../src/service/repository/repository.js';
import { serviceHarness, type ServiceHarness } from '../service/service-context.js';

let harness: ServiceHarness;
beforeAll(async () => {
  harness = await serviceHarness();
});
afterAll(async () => harness?.close());

const TENANT = 'due-mark';

/** Whether the indexer's sweep finds the tenant (`termsDue`; over FoundationDB, its count's key, `termsPending`). */
const marked = async (): Promise<boolean> => (await harness.store.transact((tx) => tenantsWithPendingTerms(tx, undefined, 100), { readOnly: true })).includes(TENANT);
const waiting = async (): Promise<number> =>
  harness.store.transact(async (tx) => (await new Repository(tx, TENANT).terms.pending.list(100)).entries.length, { readOnly: true });

let newest: IndexPosition | undefined;
let made = 0;
async function create(): Promise<void> {
  made += 1;
  const input = checkpointInput.parse({ taskId: 'task-1', agentId: 'agent-1', executionState: { completedItems: [`fence lease step${made}`] } });
  const checkpoint = buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1, 0, 0, made)).toISOString());
  await harness.store.transact((tx) => new Repository(tx, TENANT).checkpoints.insert(checkpoint, toStored(checkpoint).stored, made, newest));
  newest = { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id };
}

it('is set by the creates, cleared by the merge that empties the list, and set again by the next create, which is merged', { timeout: 30_000 }, async () => {
  // Neither the poke's delay nor the sweep comes round during the test: only `settle` merges.
  const indexer = new Indexer(harness.ctx, 3_600_000, 3_600_000);
  indexer.start();
  try {
    expect(await marked()).toBe(false);
    await create();
    await create();
    expect(await marked()).toBe(true);
    expect(await waiting()).toBe(2);
    await indexer.settle();
    expect(await waiting()).toBe(0);
    expect(await marked()).toBe(false);
    for (let round = 0; round < 3; round++) {
      await create();
      expect(await marked()).toBe(true);
      await indexer.settle();
      expect(await waiting()).toBe(0);
      expect(await marked()).toBe(false);
    }
  } finally {
    await indexer.stop();
  }
});
