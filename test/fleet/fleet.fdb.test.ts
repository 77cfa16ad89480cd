/**
 * Three real Baton processes over one FoundationDB cluster (DESIGN §10),
 * through the fleet harness, one of them `kill -9`ed and restarted mid-run:
 * 200 creates on one task split over the instances; 20-way acknowledgments
 * and lease races; If-Match races; one Idempotency-Key through every
 * instance at once; 200 short leases; tasks expiring under every instance's
 * sweeper. Without a cluster (`FDB_CLUSTER_FILE`) the suite is reported as
 * skipped, with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBinding } from '../../src/store/fdb.js';
import { checkpointBody, TOKENS } from '../support/app.js';
import { fleetStore, startFleet, type Fleet } from '../support/fleet.js';

const store = fleetStore();
const reachable = store.ok ? await loadBinding().then(() => true, () => false) : false;
const reason = !store.ok ? store.reason : reachable ? '' : 'skipped: FDB_CLUSTER_FILE is set, but the FoundationDB client (libfdb_c and the npm package foundationdb) is not installed';
const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.writer}` };
const admin = { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.admin}` };

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

describe.skipIf(!reachable)(reachable ? 'three instances over one FoundationDB cluster' : `three instances over one FoundationDB cluster — ${reason}`, () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet({ size: 3, env: { BATON_LEASE_SWEEP_MS: '50', BATON_RETENTION_SWEEP_MS: '100' } });
  }, 180_000);
  afterAll(async () => {
    await fleet?.stop();
  });

  /** One request to instance `i`; a connection refused (an instance being restarted) is tried on the next one. */
  async function call(i: number, method: string, path: string, body?: unknown, extra: Record<string, string> = {}, auth = headers): Promise<Answer> {
    for (let attempt = 0; attempt < fleet.instances.length * 3; attempt += 1) {
      const instance = fleet.at((i + attempt) % fleet.instances.length);
      try {
        const res = await fetch(`${instance.url}${path}`, { method, headers: { ...auth, ...extra }, ...(body === undefined ? {} : { body: JSON.stringify(body) }), signal: AbortSignal.timeout(20_000) });
        const text = await res.text();
        return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    throw new Error(`No instance answered ${method} ${path}.`);
  }

  async function history(taskId: string): Promise<{ id: string; version: number }[]> {
    const items: { id: string; version: number }[] = [];
    for (let cursor: string | undefined, more = true; more; ) {
      const page = await call(0, 'GET', `/v1/tasks/${taskId}/checkpoints?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      items.push(...(page.body.items as { id: string; version: number }[]));
      cursor = page.body.nextCursor as string | undefined;
      more = cursor !== undefined;
    }
    return items;
  }

  async function events(types: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
    const all: { type: string; data: Record<string, unknown> }[] = [];
    for (let after: string | undefined, more = true; more; ) {
      const page = await call(0, 'GET', `/v1/events?types=${types}&limit=1000${after ? `&after=${after}` : ''}`);
      const items = page.body.items as { id: string; type: string; data: Record<string, unknown> }[];
      all.push(...items);
      after = items[items.length - 1]?.id;
      more = items.length === 1000;
    }
    return all;
  }

  it('200 creates on one task split over the instances, one killed and restarted: all 2xx, a gapless history, a verifying chain', { timeout: 180_000 }, async () => {
    const taskId = 'fleet-200';
    const answers: Answer[] = [];
    const sends = Array.from({ length: 200 }, (_, n) => n);
    let restarted: Promise<unknown> | undefined;
    for (let at = 0; at < sends.length; at += 20) {
      if (at === 100) {
        await fleet.kill(2);
        restarted = fleet.restart(2);
      }
      answers.push(...(await Promise.all(sends.slice(at, at + 20).map((n) => call(n % 3, 'POST', '/v1/checkpoints', checkpointBody(taskId, { labels: { n } }))))));
    }
    await restarted;
    expect(answers.map((a) => a.status).filter((s) => s !== 201)).toEqual([]);
    const items = await history(taskId);
    expect(items).toHaveLength(200);
    expect(new Set(items.map((c) => c.id)).size).toBe(200);
    expect((await call(1, 'GET', `/v1/tasks/${taskId}/audit/verify`)).body).toMatchObject({ ok: true, entries: 200 });
  });

  it('20 acknowledgments of one handoff and 20 lease requests through three instances: one winner each', async () => {
    const made = await call(0, 'POST', '/v1/checkpoints', checkpointBody('fleet-ack'));
    const started = await call(1, 'POST', `/v1/checkpoints/${made.body.id as string}/handoff`, { trigger: 'context_limit' });
    expect(started.status).toBe(201);
    const handoffId = (started.body.handoff as { id: string }).id;
    const acks = await Promise.all(Array.from({ length: 20 }, (_, n) => call(n % 3, 'POST', `/v1/handoffs/${handoffId}/ack`, { agentId: `acker-${n}` })));
    expect(acks.filter((a) => a.status === 200)).toHaveLength(1);
    expect(acks.filter((a) => a.status !== 200).map((a) => a.status)).toEqual(Array(19).fill(409));

    const leases = await Promise.all(Array.from({ length: 20 }, (_, n) => call(n % 3, 'POST', '/v1/tasks/fleet-lease/lease', { agentId: `holder-${n}`, ttlMs: 60_000 })));
    expect(leases.filter((a) => a.status === 201)).toHaveLength(1);
    expect(leases.filter((a) => a.status !== 201).map((a) => a.status)).toEqual(Array(19).fill(409));
  });

  it('If-Match races through every instance: one winner a round, only 200 and 412', async () => {
    const made = await call(0, 'POST', '/v1/checkpoints', checkpointBody('fleet-if-match'));
    const id = made.body.id as string;
    for (let round = 1; round <= 15; round += 1) {
      const answers = await Promise.all([0, 1, 2, 0, 1, 2].map((i, n) => call(i, 'PATCH', `/v1/checkpoints/${id}`, { labels: { round, n } }, { 'if-match': `"${round}"` })));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => a.status !== 200).map((a) => a.status)).toEqual(Array(5).fill(412));
    }
    expect((await call(2, 'GET', `/v1/checkpoints/${id}`)).body).toMatchObject({ version: 16 });
  });

  it('one Idempotency-Key sent through every instance at once makes one checkpoint', async () => {
    const body = checkpointBody('fleet-idempotent');
    const answers = await Promise.all(Array.from({ length: 9 }, (_, n) => call(n % 3, 'POST', '/v1/checkpoints', body, { 'idempotency-key': 'fleet-key-1' })));
    expect(answers.map((a) => a.status)).toEqual(Array(9).fill(201));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await history('fleet-idempotent')).toHaveLength(1);
  });

  it('200 short leases expire with one LEASE_EXPIRED each, every instance running the sweeper', { timeout: 60_000 }, async () => {
    const granted = await Promise.all(Array.from({ length: 200 }, (_, n) => call(n % 3, 'POST', `/v1/tasks/fleet-short-${n}/lease`, { agentId: `short-${n}`, ttlMs: 200 })));
    expect(granted.map((a) => a.status)).toEqual(Array(200).fill(201));
    const ids = new Set(granted.map((a) => a.body.leaseId as string));
    let expired: { type: string; data: Record<string, unknown> }[] = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      expired = (await events('LEASE_EXPIRED')).filter((e) => ids.has(e.data.leaseId as string));
      if (expired.length >= 200) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expired = (await events('LEASE_EXPIRED')).filter((e) => ids.has(e.data.leaseId as string));
    expect(expired).toHaveLength(200);
    expect(new Set(expired.map((e) => e.data.leaseId)).size).toBe(200);
  });

  it('tasks expiring under every instance’s sweeper: one tombstone each', { timeout: 60_000 }, async () => {
    const tasks = Array.from({ length: 20 }, (_, n) => `fleet-expiring-${n}`);
    for (const [n, taskId] of tasks.entries()) {
      expect((await call(n % 3, 'POST', '/v1/checkpoints', checkpointBody(taskId))).status).toBe(201);
      expect((await call(n % 3, 'PUT', `/v1/tasks/${taskId}/policy`, { expireAfter: 'PT1S' }, {}, admin)).status).toBe(200);
    }
    const tombstones = async (taskId: string) =>
      ((await call(0, 'GET', `/v1/tasks/${taskId}/audit?limit=1000`, undefined, {}, admin)).body.items as { action: string }[]).filter((e) => e.action === 'task.purged').length;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      if ((await Promise.all(tasks.map(tombstones))).every((count) => count >= 1)) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await Promise.all(tasks.map(tombstones))).toEqual(Array(20).fill(1));
  });
});
