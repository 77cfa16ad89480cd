/**
 * The write queue's replay over a real FoundationDB cluster (DESIGN §5,
 * §10): 20,000 creates answered 202 from the journal during an injected
 * outage; the store comes back and the replay starts; the process is
 * killed with `kill -9` in the middle of it and restarted on the same
 * journal; every write then applies exactly once (each task lists exactly
 * the checkpoints its 202s promised, with those ids, nothing twice). Prints
 * the replay's rate and the process's peak resident memory. Without a
 * cluster (`FDB_CLUSTER_FILE`) the suite is reported as skipped, with the
 * reason.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBinding } from '../../src/store/fdb.js';
import { TOKENS } from '../support/app.js';
import { fleetStore, startFleet, type Fleet } from '../support/fleet.js';

const store = fleetStore();
const reachable = store.ok ? await loadBinding().then(() => true, () => false) : false;
const reason = !store.ok ? store.reason : reachable ? '' : 'skipped: FDB_CLUSTER_FILE is set, but the FoundationDB client (libfdb_c and the npm package foundationdb) is not installed';
const writer = { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.writer}` };
const admin = { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.admin}` };

const WRITES = 20_000;
const TASKS = 100;

async function depth(base: string): Promise<number> {
  const res = await fetch(`${base}/readyz`);
  return ((await res.json()) as { queue?: { depth?: number } }).queue?.depth ?? 0;
}

function residentMB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Every checkpoint id a task lists, oldest first. */
async function listed(base: string, taskId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const res = await fetch(`${base}/v1/tasks/${taskId}/checkpoints?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: writer });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: { id: string }[]; nextCursor?: string };
    ids.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return ids;
}

describe.skipIf(!reachable)(reachable ? 'the write queue over FoundationDB' : `the write queue over FoundationDB — ${reason}`, () => {
  let fleet: Fleet | undefined;
  afterAll(async () => fleet?.stop());

  it('replays 20,000 queued writes, killed with kill -9 mid-replay and restarted: each applied exactly once', async () => {
    fleet = await startFleet({ size: 1, args: ['--enable-fault-injection'], env: { BATON_QUEUE_MAX_BYTES: String(256 * 1024 * 1024) } });
    let base = fleet.at(0).url;
    const faults = async (state: 'ok' | 'unavailable') =>
      expect((await fetch(`${base}/v1/admin/faults`, { method: 'POST', headers: admin, body: JSON.stringify({ store: state }) })).status).toBe(200);

    await faults('unavailable');
    const promised = new Map<string, string[]>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < WRITES; i = next++) {
          const taskId = `replay-task-${i % TASKS}`;
          const body = JSON.stringify({ taskId, agentId: 'agent-1', executionState: { phase: 'implementing', completedItems: [`step ${i} of the replay`] } });
          const res = await fetch(`${base}/v1/checkpoints`, { method: 'POST', headers: writer, body });
          expect(res.status).toBe(202);
          const id = ((await res.json()) as { checkpoint: { id: string } }).checkpoint.id;
          promised.set(taskId, [...(promised.get(taskId) ?? []), id]);
        }
      }),
    );
    expect(await depth(base)).toBe(WRITES);

    // The store comes back: the replay starts; killed once about a quarter has applied.
    let peakMB = residentMB(fleet.at(0).pid);
    const started = performance.now();
    await faults('ok');
    let left = WRITES;
    while (left > WRITES * 0.75) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = await depth(base);
      peakMB = Math.max(peakMB, residentMB(fleet.at(0).pid));
    }
    await fleet.kill(0);
    const killedAt = (performance.now() - started) / 1000;

    const restarted = await fleet.restart(0);
    base = restarted.url;
    const resumed = performance.now();
    const atRestart = await depth(base);
    expect(atRestart).toBeGreaterThan(0);
    while ((left = await depth(base)) > 0) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      peakMB = Math.max(peakMB, residentMB(restarted.pid));
      expect((performance.now() - resumed) / 1000, `the replay stalled at ${left} writes`).toBeLessThan(600);
    }
    const drainSeconds = (performance.now() - resumed) / 1000;
    console.log(
      `queue replay over FoundationDB: ${WRITES} writes queued; ${WRITES - atRestart} applied in ${killedAt.toFixed(1)} s before kill -9, ` +
        `${atRestart} after the restart in ${drainSeconds.toFixed(1)} s (${Math.round(atRestart / drainSeconds)}/s); peak resident ${peakMB.toFixed(0)} MB`,
    );

    // Exactly once: each task lists what its 202s promised, in acceptance order, nothing twice, nothing missing.
    for (const [taskId, ids] of promised) {
      const found = await listed(base, taskId);
      expect(new Set(found).size, taskId).toBe(found.length);
      expect(new Set(found), taskId).toEqual(new Set(ids));
    }
    const dead = await fetch(`${base}/v1/admin/dead-letters`, { headers: admin });
    if (dead.status === 200) expect(((await dead.json()) as { items: unknown[] }).items).toEqual([]);
  }, 900_000);
});
