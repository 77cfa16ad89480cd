/**
 * The fleet's maintenance duties (DESIGN §10): three real Baton processes
 * over one FoundationDB cluster. Each duty (lease sweep, operation sweep,
 * maintenance, indexer) is run by one instance at a time — its `duty_runs_total`
 * grows, the others' stay still — and when the holder is killed with
 * `kill -9`, another instance takes each of its duties within the lease's
 * time, while leases that run out meanwhile are each announced once; and a
 * task written past its keepLast through every instance is compacted to it,
 * each checkpoint removed once.
 * Without a cluster the suite is reported as skipped, with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBinding } from '../../src/store/fdb.js';
import { checkpointBody, TOKENS } from '../support/app.js';
import { fleetStore, startFleet, type Fleet, type Instance } from '../support/fleet.js';

const store = fleetStore();
const reachable = store.ok ? await loadBinding().then(() => true, () => false) : false;
const reason = !store.ok ? store.reason : reachable ? '' : 'skipped: FDB_CLUSTER_FILE is set, but the FoundationDB client (libfdb_c and the npm package foundationdb) is not installed';
const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.writer}` };
const admin = { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.admin}` };

const DUTIES = ['lease-sweep', 'operation-sweep', 'maintenance', 'indexer'] as const;
const TTL_MS = 1_000;
const SKEW_MS = 200;
/** The indexer looks for work every second, and a duty's lease is never shorter than three of its intervals. */
const INDEXER_INTERVAL_MS = 1_000;
/** How long after the kill each duty must be held elsewhere: its lease's time, the skew allowance, one tick, and the metrics' scrape. */
const takeoverBound = (duty: (typeof DUTIES)[number]) => (duty === 'indexer' ? Math.max(TTL_MS, 3 * INDEXER_INTERVAL_MS) + SKEW_MS + INDEXER_INTERVAL_MS + 500 : TTL_MS + SKEW_MS + 500);

/** `name{duty="…"}` of every duty on `instance`. */
async function byDuty(instance: Instance, name: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${instance.url}/metrics`)).text();
  const found: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}\\{duty="([a-z-]+)"\\} (\\S+)$`).exec(line);
    if (match) found[match[1]!] = Number(match[2]);
  }
  return found;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!reachable)(reachable ? 'maintenance duties over one FoundationDB cluster' : `maintenance duties over one FoundationDB cluster — ${reason}`, () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet({
      size: 3,
      env: { BATON_LEASE_SWEEP_MS: '50', BATON_OPERATION_SWEEP_MS: '100', BATON_RETENTION_SWEEP_MS: '100', BATON_DUTY_TTL_MS: String(TTL_MS), BATON_CLOCK_SKEW_MS: String(SKEW_MS) },
    });
  }, 180_000);
  afterAll(async () => {
    await fleet?.stop();
  });

  /** Which instances ran each duty over `ms`: the indexes whose duty_runs_total grew. */
  async function runners(ms: number, indexes: number[]): Promise<Record<string, number[]>> {
    const live = indexes.map((i) => fleet.at(i));
    const before = await Promise.all(live.map((instance) => byDuty(instance, 'duty_runs_total')));
    await sleep(ms);
    const after = await Promise.all(live.map((instance) => byDuty(instance, 'duty_runs_total')));
    return Object.fromEntries(DUTIES.map((duty) => [duty, live.filter((_, i) => (after[i]![duty] ?? 0) > (before[i]![duty] ?? 0)).map((instance) => instance.index)]));
  }

  it('runs each duty on one instance at a time, and another takes it within the lease time after the holder is killed', { timeout: 120_000 }, async () => {
    // Let the first lease holders settle (every instance starts its sweepers at once).
    await sleep(TTL_MS);
    const first = await runners(2_000, [0, 1, 2]);
    for (const duty of DUTIES) expect(first[duty], duty).toHaveLength(1);
    console.log(`duty holders: ${JSON.stringify(first)}`);
    const holder = first['lease-sweep']![0]!;
    const others = [0, 1, 2].filter((i) => i !== holder);

    // Leases that run out after the holder dies: each announced once, by whoever takes the sweep.
    const granted = await Promise.all(
      Array.from({ length: 30 }, async (_, n) => {
        const res = await fetch(`${fleet.at(others[n % 2]!).url}/v1/tasks/duty-short-${n}/lease`, { method: 'POST', headers, body: JSON.stringify({ agentId: `short-${n}`, ttlMs: 300 }) });
        expect(res.status).toBe(201);
        return ((await res.json()) as { leaseId: string }).leaseId;
      }),
    );

    await fleet.kill(holder);
    const killedAt = performance.now();
    const taken: Record<string, number> = {};
    while (Object.keys(taken).length < DUTIES.length && performance.now() - killedAt < 10_000) {
      const held = await Promise.all(others.map((i) => byDuty(fleet.at(i), 'duty_held')));
      for (const duty of DUTIES) if (taken[duty] === undefined && held.some((h) => h[duty] === 1)) taken[duty] = performance.now() - killedAt;
      await sleep(25);
    }
    console.log(`taken over after the kill (ms): ${JSON.stringify(taken)}`);
    for (const duty of DUTIES) expect(taken[duty], duty).toBeLessThanOrEqual(takeoverBound(duty));
    const after = await runners(2_000, others);
    for (const duty of DUTIES) expect(after[duty], duty).toHaveLength(1);

    const expired = new Map<string, number>();
    for (const deadline = Date.now() + 15_000; Date.now() < deadline && expired.size < granted.length; await sleep(100)) {
      const page = (await (await fetch(`${fleet.at(others[0]!).url}/v1/events?types=LEASE_EXPIRED&limit=1000`, { headers })).json()) as { items: { data: { leaseId: string } }[] };
      expired.clear();
      for (const event of page.items) if (granted.includes(event.data.leaseId)) expired.set(event.data.leaseId, (expired.get(event.data.leaseId) ?? 0) + 1);
    }
    expect(expired.size).toBe(granted.length);
    expect([...expired.values()].every((count) => count === 1)).toBe(true);
    await fleet.restart(holder);
  });

  it('compacts a task written past its keepLast through every instance down to it, each checkpoint removed once', { timeout: 60_000 }, async () => {
    const task = 'duty-kept';
    const live = [0, 1, 2];
    const ids: string[] = [];
    for (let n = 0; n < 30; n += 1) {
      const instance = fleet.at(live[n % live.length]!);
      const res = await fetch(`${instance.url}/v1/checkpoints`, { method: 'POST', headers, body: JSON.stringify(checkpointBody(task)) });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
      // The policy is a task's: set once the task exists, so the writes after it ask for compactions as they go.
      if (n === 0) {
        const policy = await fetch(`${fleet.at(live[0]!).url}/v1/tasks/${task}/policy`, { method: 'PUT', headers: admin, body: JSON.stringify({ keepLast: 3 }) });
        expect(policy.status).toBe(200);
      }
    }
    let left: string[] = [];
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(200)) {
      const page = (await (await fetch(`${fleet.at(live[0]!).url}/v1/tasks/${task}/checkpoints?limit=100`, { headers })).json()) as { items: { id: string }[] };
      left = page.items.map((item) => item.id);
      if (left.length === 3) break;
    }
    expect(left.sort()).toEqual(ids.slice(-3).sort());
    const audit = (await (await fetch(`${fleet.at(live[0]!).url}/v1/tasks/${task}/audit?limit=1000`, { headers: admin })).json()) as { items: { action: string; details?: { removed?: string[] } }[] };
    const removed = audit.items.filter((entry) => entry.action === 'task.compacted').flatMap((entry) => entry.details?.removed ?? []);
    // However many compactions it took while the writes went on, together they removed each of the other 27 once.
    expect(removed.sort()).toEqual(ids.slice(0, -3).sort());
  });
});
