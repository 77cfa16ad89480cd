/**
 * The fleet's count of a tenant's full-text pending entries and the gate
 * that holds creates on it (`repository/pending-terms.ts`,
 * `indexer/pending-gate.ts`). Where other processes write the store
 * (FoundationDB, `npm run test:fdb`), a create adds one in its transaction
 * and a merge takes away what it cleared in its own, so the count is the
 * list's length at every version, creates and merges running at once; a
 * listing of the whole list puts a count that drifted right; and the gate
 * holds a tenant's creates only while its count is past the bound and an
 * instance holds the indexer duty, never longer than the merge stalls.
 * Over LMDB no count is kept (one process, whose indexer counts its own
 * creates): those cases say so and skip.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCheckpoint } from '../../src/domain/changes.js';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import { newId } from '../../src/domain/ids.js';
import { listBatch } from '../../src/service/indexer/batch.js';
import { Indexer } from '../../src/service/indexer/indexer.js';
import { PendingGate } from '../../src/service/indexer/pending-gate.js';
import { clearDutyLease, pendingCounts, putDutyLease, Repository, tenantsWithPendingTerms, toStored, type IndexPosition } from '../../src/service/repository/repository.js';
import { systemKeyspace } from '../../src/store/keyspace.js';
import { serviceHarness, type ServiceHarness } from '../service/service-context.js';

let harness: ServiceHarness;
let shared = false;
beforeAll(async () => {
  harness = await serviceHarness();
  shared = (await harness.store.transact(async (tx) => tx.shared === true, { readOnly: true })) === true;
});
afterAll(async () => harness?.close());

const LMDB = 'a store one process holds (LMDB) keeps no count: its indexer bounds its own creates (`Indexer.admit`)';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A tenant's count and its list's length, read at one version. */
async function countAndLength(tenant: string): Promise<[count: number, length: number]> {
  return harness.store.transact(async (tx) => {
    const [[count], rows] = await Promise.all([pendingCounts(tx, [tenant]), new Repository(tx, tenant).terms.pending.rows(100_000)]);
    return [count!, rows.length];
  }, { readOnly: true });
}

/** Creates checkpoints of `tasks` tasks of `tenant`, `each` a task, each task's one after the other. */
async function create(tenant: string, tasks: number, each: number): Promise<void> {
  await Promise.all(
    Array.from({ length: tasks }, async (_, t) => {
      let newest: IndexPosition | undefined;
      for (let n = 0; n < each; n++) {
        const input = checkpointInput.parse({ taskId: `task-${t}`, agentId: 'agent-1', executionState: { completedItems: [`fence lease step${n} word${t}x${n}`] } });
        const checkpoint = buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1, 0, t, n)).toISOString());
        await harness.store.transact((tx) => new Repository(tx, tenant).checkpoints.insert(checkpoint, toStored(checkpoint).stored, n + 1, newest));
        newest = { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id };
      }
    }),
  );
}

it('is the list\'s length at every version while creates and merges run at once, and 0 once the list is empty', { timeout: 60_000 }, async (context) => {
  if (!shared) context.skip(LMDB);
  const tenant = 'count-races';
  // Merges as often as it can: every poke after 1 ms, a sweep every 50 ms.
  const indexer = new Indexer(harness.ctx, 1, 50);
  indexer.start();
  let reads = 0;
  let created = false;
  const sampled: Array<[number, number]> = [];
  const shrank = () => sampled.some(([, length], i) => i > 0 && length < sampled[i - 1]![1]);
  // Sampled while the creates run, and after them until a merge is seen to shorten the list (a fast cluster can take
  // every create before the first sweep's merge lands): every version read, the count is the list's length.
  const sampler = (async () => {
    const deadline = Date.now() + 20_000;
    while (!created || (!shrank() && Date.now() < deadline)) {
      sampled.push(await countAndLength(tenant));
      reads += 1;
    }
  })();
  try {
    try {
      await create(tenant, 8, 60);
    } finally {
      created = true;
      await sampler;
    }
    for (const [count, length] of sampled) expect(count).toBe(length);
    expect(reads).toBeGreaterThan(5);
    // The merges ran beside the reads: the list was seen to grow and to shrink.
    expect(Math.max(...sampled.map(([, length]) => length))).toBeGreaterThan(0);
    expect(shrank()).toBe(true);
    await indexer.settle();
  } finally {
    // A failure here must not leave an indexer holding the duty for the cases after it.
    await indexer.stop();
  }
  expect(await countAndLength(tenant)).toEqual([0, 0]);
  console.log(`count and length read at ${reads} versions while creates and merges ran; longest list ${Math.max(...sampled.map(([, length]) => length))}`);
});

it('is put right by a listing of the whole list, whatever it had drifted to', { timeout: 30_000 }, async (context) => {
  if (!shared) context.skip(LMDB);
  const tenant = 'count-drift';
  const key = systemKeyspace().termsPending.pack(tenant);
  await harness.store.transact(async (tx) => tx.add(key, 99));
  await create(tenant, 1, 3);
  expect(await countAndLength(tenant)).toEqual([102, 3]);
  // A merge's listing, in a transaction that writes, as `Indexer.mergeInOne` makes it.
  await harness.store.transact(async (tx) => {
    const listed = await listBatch(tx, tenant, undefined, true, true);
    expect(listed?.entries).toHaveLength(3);
  });
  expect(await countAndLength(tenant)).toEqual([3, 3]);
  await harness.store.transact(async (tx) => tx.add(key, -10));
  await harness.store.transact((tx) => listBatch(tx, tenant, undefined, true, true));
  expect(await countAndLength(tenant)).toEqual([3, 3]);
});

it('is not kept over LMDB', async (context) => {
  if (shared) context.skip('the store is shared: the count is kept (the cases above)');
  const tenant = 'count-lmdb';
  await create(tenant, 1, 2);
  expect(await countAndLength(tenant)).toEqual([0, 2]);
});

it('holds a tenant\'s creates while its count is past the bound and an instance holds the indexer duty, and lets them go once the merge brings it back', { timeout: 30_000 }, async (context) => {
  if (!shared) context.skip(LMDB);
  const tenant = 'gate-holds';
  await create(tenant, 2, 5);
  const gate = new PendingGate(harness.ctx, 4, 20, 60_000);
  try {
    // No instance holds the duty: nothing waits, however long the list.
    expect(gate.admit(tenant)).toBeUndefined();
    await sleep(100);
    expect(gate.admit(tenant)).toBeUndefined();

    await harness.store.transact(async (tx) => putDutyLease(tx, { duty: 'indexer', holder: 'another-instance', until: Date.now() + 60_000, since: new Date().toISOString() }));
    await sleep(100);
    const held = gate.admit(tenant);
    expect(held).toBeInstanceOf(Promise);
    let released = false;
    void held!.then(() => (released = true));
    await sleep(300);
    expect(released).toBe(false);
    // Another tenant, within its bound, goes on.
    expect(gate.admit('gate-other-tenant')).toBeUndefined();

    // The holder merges: the count falls to 0, and the create goes on.
    const indexer = new Indexer(harness.ctx, 3_600_000, 3_600_000);
    indexer.start();
    await indexer.settle();
    await indexer.stop();
    const started = Date.now();
    await held;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(gate.admit(tenant)).toBeUndefined();
  } finally {
    gate.stop();
    await harness.store.transact(async (tx) => clearDutyLease(tx, 'indexer'));
  }
});

it('lets creates go when the merge makes no progress for the stall time, or the duty\'s lease runs out', { timeout: 30_000 }, async (context) => {
  if (!shared) context.skip(LMDB);
  const tenant = 'gate-stalls';
  await create(tenant, 2, 5);
  const gate = new PendingGate(harness.ctx, 4, 20, 500);
  try {
    await harness.store.transact(async (tx) => putDutyLease(tx, { duty: 'indexer', holder: 'a-stopped-instance', until: Date.now() + 60_000, since: new Date().toISOString() }));
    expect(gate.admit(tenant)).toBeUndefined();
    await sleep(100);
    // A holder that merges nothing: the wait ends after the stall time.
    const started = Date.now();
    await gate.admit(tenant);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(2_000);
    // And while it stays stalled, the creates after it go on at once rather than each waiting the stall time.
    expect(gate.admit(tenant)).toBeUndefined();
    await sleep(100);
    expect(gate.admit(tenant)).toBeUndefined();

    // A lease that ran out (by more than the clock skew), and a fresh gate: nothing waits.
    await harness.store.transact(async (tx) => putDutyLease(tx, { duty: 'indexer', holder: 'a-stopped-instance', until: Date.now() - harness.ctx.clockSkewMs - 1_000, since: new Date().toISOString() }));
    const fresh = new PendingGate(harness.ctx, 4, 20, 60_000);
    try {
      expect(fresh.admit(tenant)).toBeUndefined();
      await sleep(100);
      expect(fresh.admit(tenant)).toBeUndefined();
    } finally {
      fresh.stop();
    }
  } finally {
    gate.stop();
    await harness.store.transact(async (tx) => clearDutyLease(tx, 'indexer'));
  }
});

it('marks its tenant due over FoundationDB, and the indexer still finds a tenant marked the older way, page by page', { timeout: 30_000 }, async (context) => {
  if (!shared) context.skip(LMDB);
  await create('due-by-count', 1, 1);
  // No separate mark: the count's key is it.
  expect(await harness.store.transact((tx) => tx.get(systemKeyspace().termsDue.pack('due-by-count')), { readOnly: true })).toBeUndefined();
  await harness.store.transact(async (tx) => tx.set(systemKeyspace().termsDue.pack('due-by-mark'), Buffer.alloc(0)));
  const all = await harness.store.transact((tx) => tenantsWithPendingTerms(tx, undefined, 1_000), { readOnly: true });
  expect(all).toEqual(expect.arrayContaining(['due-by-count', 'due-by-mark']));
  expect(new Set(all).size).toBe(all.length);
  // One tenant a page: the same tenants, in the same order.
  const paged: string[] = [];
  for (let after: string | undefined; ; ) {
    const page = await harness.store.transact((tx) => tenantsWithPendingTerms(tx, after, 1), { readOnly: true });
    if (page.length === 0) break;
    paged.push(...page);
    after = page.at(-1);
  }
  expect(paged).toEqual(all);
});
