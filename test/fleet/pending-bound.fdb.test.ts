/**
 * The fleet's bound on the full-text pending list (`docs/fleet.md`, "The
 * full-text pending list's bound"): two real Baton processes over one
 * FoundationDB cluster, the first holding the indexer duty, the second
 * started with `BATON_INDEXER=off`, so every create through the second is
 * merged by the first. With `BATON_INDEXER_PENDING_BOUND=40` and the holder
 * merging the others' creates at its sweep, once a second, the list read
 * straight from the cluster never grows much past the bound while creates
 * pour in through the second instance, its creates are seen to wait, and
 * the tenant's count is the list's length at every read; with the holder
 * stopped (`SIGSTOP`), creates go on within the stall time instead of
 * waiting for a merge that does not come, and once it runs again the list
 * empties. Without a cluster the suite is reported as skipped, with the
 * reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingCounts, Repository } from '../../src/service/repository/repository.js';
import { loadBinding, type FdbStore } from '../../src/store/fdb.js';
import { checkpointBody, TOKENS } from '../support/app.js';
import { fleetStore, startFleet, type Fleet, type Instance } from '../support/fleet.js';

const store = fleetStore();
const reachable = store.ok ? await loadBinding().then(() => true, () => false) : false;
const reason = !store.ok ? store.reason : reachable ? '' : 'skipped: FDB_CLUSTER_FILE is set, but the FoundationDB client (libfdb_c and the npm package foundationdb) is not installed';
const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.writer}` };
const TENANT = 'default';
const BOUND = 40;
/** Creates in flight at once. */
const CONCURRENCY = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function metric(instance: Instance, name: string): Promise<number> {
  const text = await (await fetch(`${instance.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? NaN);
}

describe.skipIf(!reachable)(reachable ? 'the full-text pending list\'s bound over one FoundationDB cluster' : `the full-text pending list's bound over one FoundationDB cluster — ${reason}`, () => {
  let fleet: Fleet;
  let cluster: FdbStore;
  beforeAll(async () => {
    fleet = await startFleet({
      size: 2,
      env: { BATON_INDEXER_PENDING_BOUND: String(BOUND), BATON_DUTY_TTL_MS: '60000' },
      // The first instance takes the indexer duty; the second never merges, so its creates wait on the fleet's count alone.
      envOf: (index): Record<string, string> => (index === 1 ? { BATON_INDEXER: 'off' } : {}),
    });
    const { FdbStore } = await import('../../src/store/fdb.js');
    cluster = await FdbStore.open({ clusterFile: store.ok ? store.clusterFile : '', prefix: fleet.prefix });
  }, 180_000);
  afterAll(async () => {
    await cluster?.close();
    await fleet?.stop();
  });

  /** The tenant's count and its list's length, read at one version. */
  const countAndLength = (): Promise<[number, number]> =>
    cluster.transact(async (tx) => {
      const [[count], rows] = await Promise.all([pendingCounts(tx, [TENANT]), new Repository(tx, TENANT).terms.pending.rows(100_000)]);
      return [count!, rows.length];
    }, { readOnly: true });

  /** `total` creates through `instance`, CONCURRENCY at a time, each a task's next; each one's time (ms). */
  async function creates(instance: Instance, total: number, prefix: string): Promise<number[]> {
    let next = 0;
    const times: number[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < total) {
          const n = next++;
          const started = Date.now();
          const res = await fetch(`${instance.url}/v1/checkpoints`, { method: 'POST', headers, body: JSON.stringify(checkpointBody(`${prefix}-${n % 16}`, { executionState: { completedItems: [`step ${n} of the ${prefix} run, word${n}`] } })) });
          expect(res.status, await res.text()).toBe(201);
          times.push(Date.now() - started);
        }
      }),
    );
    return times;
  }

  it('keeps the list near its bound while another instance\'s creates pour in, holding them while it is past it', { timeout: 120_000 }, async () => {
    // Let the first instance take the indexer duty.
    await sleep(2_000);
    expect(await metric(fleet.at(0), 'duty_held{duty="indexer"}')).toBe(1);
    const waitsBefore = await metric(fleet.at(1), 'indexer_admission_waits_total');
    let done = false;
    const sampled: Array<[number, number]> = [];
    const sampler = (async () => {
      while (!done) {
        sampled.push(await countAndLength());
        await sleep(20);
      }
    })();
    try {
      await creates(fleet.at(1), 600, 'bound');
    } finally {
      done = true;
      await sampler;
    }
    const longest = Math.max(...sampled.map(([, length]) => length));
    const waits = (await metric(fleet.at(1), 'indexer_admission_waits_total')) - waitsBefore;
    console.log(`600 creates through the instance that does not merge: longest list ${longest} (bound ${BOUND}), ${waits} creates waited, ${sampled.length} reads`);
    for (const [count, length] of sampled) expect(count).toBe(length);
    expect(waits).toBeGreaterThan(0);
    // The gate reads the count every 100 ms: what comes in meanwhile, and the creates in flight, pass the bound.
    expect(longest).toBeLessThanOrEqual(BOUND + 120);
    expect(longest).toBeGreaterThan(BOUND / 2);
  });

  it('lets creates go within the stall time while the holder is stopped, and the list empties once it runs again', { timeout: 120_000 }, async () => {
    const holder = fleet.at(0);
    process.kill(holder.pid, 'SIGSTOP');
    let times: number[];
    try {
      times = await creates(fleet.at(1), 200, 'stalled');
    } finally {
      process.kill(holder.pid, 'SIGCONT');
    }
    const [count, length] = await countAndLength();
    console.log(`200 creates with the holder stopped: slowest ${Math.max(...times)} ms, list ${length}`);
    expect(count).toBe(length);
    expect(length).toBeGreaterThanOrEqual(200);
    // The gate's stall time (2 s) and a read of the counts, not a wait for a merge that never came.
    expect(Math.max(...times)).toBeLessThan(5_000);
    // The operator is told, once, why creates went past the bound.
    expect(fleet.at(1).output()).toContain('merged none of it while they waited');
    const deadline = Date.now() + 30_000;
    while ((await countAndLength())[1] > 0 && Date.now() < deadline) await sleep(250);
    expect(await countAndLength()).toEqual([0, 0]);
  });
});
