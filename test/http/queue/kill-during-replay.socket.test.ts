/**
 * DESIGN §5 under the worst timing, over a real socket: writes are queued
 * while the store is unavailable; the store comes back (slowed, so the
 * replay takes a while) and, while the queue is replaying and writers keep
 * sending — to tasks with queued writes (answered 202 behind them) and to
 * fresh tasks (201) — the process is killed with kill -9. Restarted on the
 * same directory, with the writers still sending, the queue finishes. Every
 * acknowledged write is then applied exactly once, in the order it was
 * acknowledged per task, with the hash its answer announced; no checkpoint,
 * audit entry or event appears twice; nothing is dead-lettered; and the
 * journal on disk counts every record as applied.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { decodeRecords } from '../../../src/queue/journal.js';
import { checkpointBody, TOKENS } from '../../support/app.js';
import { allEvents, exited, removeDir, startBaton, stopBaton, tempDataDir, WRITER, type RunningServer } from '../../support/crash-server.js';

const QUEUED_TASKS = 12;
const QUEUED_PER_TASK = 25;
/** Writer loops while the replay runs and after the restart: half to queued tasks, half to fresh ones. */
const WRITERS = 6;
const ADMIN = { authorization: `Bearer ${TOKENS.admin}` };
const FLAG = ['--enable-fault-injection'];
const ENV = { BATON_QUEUE_REPLAY_MS: '50' };
const REQUEST_TIMEOUT_MS = 10_000;

interface Ack {
  id: string;
  hash: string;
  status: number;
}

const children: ChildProcess[] = [];
let dir: string | undefined;
afterAll(async () => {
  for (const child of children) await stopBaton(child);
  removeDir(dir);
});

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...WRITER, ...(init.headers as Record<string, string>) }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function history(base: string, taskId: string): Promise<{ id: string; compliance: { hash: string } }[]> {
  const items: { id: string; compliance: { hash: string } }[] = [];
  for (let cursor: string | undefined, more = true; more; ) {
    const page = await json(`${base}/v1/tasks/${taskId}/checkpoints?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    if (page.status === 404) return [];
    expect(page.status).toBe(200);
    items.push(...(page.body.items as { id: string; compliance: { hash: string } }[]));
    cursor = page.body.nextCursor as string | undefined;
    more = cursor !== undefined;
  }
  // Oldest first, the order the writes applied in.
  return items.reverse();
}

it('applies every acknowledged write exactly once when killed during a replay while writes keep arriving', { timeout: 180_000 }, async () => {
  dir = tempDataDir('baton-replay-kill-');
  let server: RunningServer = await startBaton(dir, ENV, 60_000, FLAG);
  children.push(server.child);
  const faults = async (body: Record<string, unknown>) => expect((await json(`${server.url}/v1/admin/faults`, { method: 'POST', headers: ADMIN, body: JSON.stringify(body) })).status).toBe(200);
  await faults({ store: 'unavailable' });

  const acked = new Map<string, Ack[]>();
  const ack = (taskId: string, entry: Ack) => acked.set(taskId, [...(acked.get(taskId) ?? []), entry]);
  const queuedTask = (t: number) => `replay-queued-${t}`;
  await Promise.all(
    Array.from({ length: QUEUED_TASKS }, async (_, t) => {
      for (let n = 0; n < QUEUED_PER_TASK; n++) {
        const res = await json(`${server.url}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(checkpointBody(queuedTask(t), { labels: { n } })) });
        expect(res.status).toBe(202);
        const checkpoint = res.body.checkpoint as { id: string; compliance: { hash: string } };
        ack(queuedTask(t), { id: checkpoint.id, hash: checkpoint.compliance.hash, status: 202 });
      }
    }),
  );

  // Writers: each sends to its own task, one write after another, and records what was acknowledged.
  let stop = false;
  let unknown = 0;
  const writerTask = (w: number) => (w % 2 === 0 ? queuedTask(w) : `replay-fresh-${w}`);
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    const taskId = writerTask(w);
    for (let n = 0; !stop; n++) {
      try {
        const res = await json(`${server.url}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(checkpointBody(taskId, { labels: { writer: w, n } })) });
        if (res.status === 201) ack(taskId, { id: res.body.id as string, hash: (res.body.compliance as { hash: string }).hash, status: 201 });
        else if (res.status === 202) {
          const checkpoint = res.body.checkpoint as { id: string; compliance: { hash: string } };
          ack(taskId, { id: checkpoint.id, hash: checkpoint.compliance.hash, status: 202 });
        } else throw new Error(`A write was answered ${res.status}: ${JSON.stringify(res.body)}`);
      } catch (error) {
        if (error instanceof Error && error.message.startsWith('A write was answered')) throw error;
        // The server was killed under this request (or is restarting): its outcome is unknown and it is not counted.
        unknown += 1;
        await sleep(50);
      }
    }
  });

  // The store answers again, slowly: the replay is under way for a while.
  await faults({ store: 'slow', latencyMs: 25 });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const applied = await history(server.url, queuedTask(1));
    const ready = await json(`${server.url}/readyz`);
    const depth = (ready.body.queue as { depth: number }).depth;
    if (applied.length > 0 && depth > 0) break;
    if (depth === 0) throw new Error('The queue drained before the kill: nothing was replaying.');
    if (Date.now() > deadline) throw new Error('The replay did not start.');
    await sleep(20);
  }
  server.child.kill('SIGKILL');
  expect(await exited(server.child)).toBe(true);

  // Restarted: the faults lived in the old process; the writers carry on against the new one.
  server = await startBaton(dir, ENV, 60_000, FLAG);
  children.push(server.child);
  await sleep(1_000);
  stop = true;
  await Promise.all(writers);
  const drainDeadline = Date.now() + 60_000;
  for (;;) {
    const ready = await json(`${server.url}/readyz`);
    if ((ready.body.queue as { depth: number }).depth === 0) break;
    if (Date.now() > drainDeadline) throw new Error(`The queue did not drain: ${JSON.stringify(ready.body)}`);
    await sleep(100);
  }

  const seen = new Set<string>();
  let total = 0;
  for (const [taskId, acks] of acked) {
    const stored = await history(server.url, taskId);
    const ids = stored.map((c) => c.id);
    // No checkpoint twice, in a task or across tasks.
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(seen.has(id)).toBe(false);
      seen.add(id);
    }
    // Every acknowledged write, in the order it was acknowledged, with the hash its answer announced.
    const ackedIds = new Set(acks.map((a) => a.id));
    expect(ids.filter((id) => ackedIds.has(id))).toEqual(acks.map((a) => a.id));
    const hashes = new Map(stored.map((c) => [c.id, c.compliance.hash]));
    for (const a of acks) expect(hashes.get(a.id)).toBe(a.hash);
    // One audit entry per checkpoint, the chain whole.
    expect((await json(`${server.url}/v1/tasks/${taskId}/audit/verify`)).body).toEqual({ ok: true, entries: ids.length });
    total += ids.length;
  }
  const events = await allEvents(server.url);
  const created = events.filter((e) => e.type === 'CHECKPOINT_CREATED').map((e) => e.subject);
  expect(created.length).toBe(total);
  expect(new Set(created)).toEqual(seen);
  expect(events.filter((e) => e.type === 'WRITE_DEAD_LETTERED')).toEqual([]);
  const letters = await json(`${server.url}/v1/admin/dead-letters`, { headers: ADMIN });
  expect(letters.body.items).toEqual([]);
  // Writes were acknowledged on both sides of the kill, while the replay ran.
  const statuses = [...acked.values()].flat().map((a) => a.status);
  expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(0);
  expect(statuses.filter((s) => s === 202).length).toBeGreaterThan(QUEUED_TASKS * QUEUED_PER_TASK);

  // The journal on disk agrees that nothing waits: a third start would replay none of these writes again.
  server.child.kill('SIGKILL');
  expect(await exited(server.child)).toBe(true);
  const log = decodeRecords(readFileSync(join(dir, 'queue', 'queue.log'))).records.length;
  const applied = Number(readFileSync(join(dir, 'queue', 'applied'), 'utf8'));
  expect(applied).toBe(log);
  console.log(`kill during replay: ${statuses.length} writes acknowledged, ${total} applied, ${unknown} with an unknown outcome`);
});
