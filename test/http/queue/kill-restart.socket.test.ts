/**
 * DESIGN §5 end to end over a real socket: with the store made unavailable,
 * 200 writes across 20 tasks are answered 202 from the durable local queue;
 * the process is killed with kill -9, restarted on the same directory, and
 * with the store back every queued write is applied exactly once, in order
 * per task, with hashes and audit chains verifying and one event each.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';
import { TOKENS } from '../../support/app.js';
import { checkpointBody } from '../../support/app.js';
import { allEvents, exited, removeDir, startBaton, stopBaton, tempDataDir, WRITER } from '../../support/crash-server.js';

const TASKS = 20;
const PER_TASK = 10;
const ADMIN = { authorization: `Bearer ${TOKENS.admin}` };
const FLAG = ['--enable-fault-injection'];
const ENV = { BATON_QUEUE_REPLAY_MS: '50' };

let dir: string | undefined;
let child: ChildProcess | undefined;
afterAll(async () => {
  await stopBaton(child);
  removeDir(dir);
});

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...WRITER, ...(init.headers as Record<string, string>) } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

it('applies every write queued before a kill -9 exactly once, in order per task, after the restart', { timeout: 120_000 }, async () => {
  dir = tempDataDir('baton-queue-');
  let server = await startBaton(dir, ENV, 60_000, FLAG);
  child = server.child;
  expect((await json(`${server.url}/v1/admin/faults`, { method: 'POST', headers: ADMIN, body: JSON.stringify({ store: 'unavailable' }) })).status).toBe(200);

  // Each task's writes in order, the tasks side by side.
  const accepted = new Map<string, { id: string; hash: string }[]>();
  await Promise.all(
    Array.from({ length: TASKS }, async (_, t) => {
      const taskId = `queued-task-${t}`;
      const ids: { id: string; hash: string }[] = [];
      for (let n = 0; n < PER_TASK; n++) {
        const res = await json(`${server.url}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(checkpointBody(taskId, { labels: { n } })) });
        expect(res.status).toBe(202);
        const checkpoint = res.body.checkpoint as { id: string; compliance: { hash: string } };
        ids.push({ id: checkpoint.id, hash: checkpoint.compliance.hash });
      }
      accepted.set(taskId, ids);
    }),
  );
  const ready = await json(`${server.url}/readyz`);
  expect(ready.body.queue).toMatchObject({ depth: TASKS * PER_TASK });

  server.child.kill('SIGKILL');
  expect(await exited(server.child)).toBe(true);

  // Restarted: the faults lived in the old process, so the store answers and the queue replays.
  server = await startBaton(dir, ENV, 60_000, FLAG);
  child = server.child;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = await json(`${server.url}/readyz`);
    if ((state.body.queue as { depth: number }).depth === 0) break;
    if (Date.now() > deadline) throw new Error(`The queue did not drain: ${JSON.stringify(state.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  for (const [taskId, ids] of accepted) {
    const history = await json(`${server.url}/v1/tasks/${taskId}/checkpoints?limit=100`);
    const items = history.body.items as { id: string; labels: { n: number }; compliance: { hash: string } }[];
    // In order, newest first, each once, with the hash the 202 answer announced.
    expect(items.map((c) => c.id)).toEqual(ids.map((c) => c.id).reverse());
    expect(items.map((c) => c.labels.n)).toEqual(Array.from({ length: PER_TASK }, (_, n) => PER_TASK - 1 - n));
    expect(items.map((c) => c.compliance.hash)).toEqual(ids.map((c) => c.hash).reverse());
    expect((await json(`${server.url}/v1/tasks/${taskId}/audit/verify`)).body).toEqual({ ok: true, entries: PER_TASK });
  }
  const events = await allEvents(server.url);
  const created = events.filter((e) => e.type === 'CHECKPOINT_CREATED').map((e) => e.subject);
  expect(created).toHaveLength(TASKS * PER_TASK);
  expect(new Set(created).size).toBe(TASKS * PER_TASK);
  expect(events.filter((e) => e.type === 'WRITE_DEAD_LETTERED')).toEqual([]);
});
