/**
 * Draining on stop (DESIGN §10) with real processes: an instance told to stop
 * (SIGTERM) while its journal holds writes stops taking requests at once and
 * replays until the journal is empty or `BATON_SHUTDOWN_GRACE_MS` ends; the
 * journal keeps what is left, which the next start replays. Whatever the
 * stop applied and whatever it left, each of the 100 writes answered 202 is
 * applied exactly once. The store is made unavailable, or slow, through
 * `POST /v1/admin/faults`; a restart clears the faults.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Journal } from '../../../src/queue/journal.js';
import { checkpointBody, TOKENS } from '../../support/app.js';
import { allEvents, exited, removeDir, startBaton, stopBaton, tempDataDir, WRITER, type RunningServer } from '../../support/crash-server.js';

const TASKS = 4;
const PER_TASK = 25;
const WRITES = TASKS * PER_TASK;
const ADMIN = { authorization: `Bearer ${TOKENS.admin}` };
const FLAG = ['--enable-fault-injection'];

let dir: string | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  await stopBaton(server?.child);
  removeDir(dir);
  server = undefined;
  dir = undefined;
});

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...WRITER, ...(init.headers as Record<string, string>) } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function faults(base: string, body: Record<string, unknown>): Promise<{ status: number }> {
  return json(`${base}/v1/admin/faults`, { method: 'POST', headers: ADMIN, body: JSON.stringify(body) });
}

/** Starts an instance on `dir` with `env`, the store made unavailable, and queues {@link WRITES} writes; answers their ids by task, in order. */
async function queueWrites(env: Record<string, string>): Promise<Map<string, string[]>> {
  dir = tempDataDir('baton-drain-');
  server = await startBaton(dir, { BATON_QUEUE_REPLAY_MS: '50', ...env }, 60_000, FLAG);
  const base = server.url;
  expect((await faults(base, { store: 'unavailable' })).status).toBe(200);
  const accepted = new Map<string, string[]>();
  await Promise.all(
    Array.from({ length: TASKS }, async (_, t) => {
      const taskId = `drained-task-${t}`;
      const ids: string[] = [];
      for (let n = 0; n < PER_TASK; n++) {
        const res = await json(`${base}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(checkpointBody(taskId, { labels: { n } })) });
        expect(res.status).toBe(202);
        ids.push(res.body.checkpointId as string);
      }
      accepted.set(taskId, ids);
    }),
  );
  expect((await json(`${base}/readyz`)).body.queue).toMatchObject({ depth: WRITES });
  return accepted;
}

/** SIGTERM; answers once the process has exited, with its exit code, how long it took, and whether it refused connections while it still ran. */
async function terminate(running: RunningServer): Promise<{ code: number | null; ms: number; refusedWhileRunning: boolean }> {
  const started = performance.now();
  running.child.kill('SIGTERM');
  let refusedWhileRunning = false;
  const gone = exited(running.child, 60_000);
  while (running.child.exitCode === null && running.child.signalCode === null && !refusedWhileRunning) {
    const answered = await fetch(`${running.url}/livez`).then(
      () => true,
      () => false,
    );
    if (!answered && running.child.exitCode === null) refusedWhileRunning = true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(await gone).toBe(true);
  return { code: running.child.exitCode, ms: performance.now() - started, refusedWhileRunning };
}

/** The writes the journal on disk still holds (the process that owned it has exited). */
async function journalled(): Promise<number> {
  const { journal, pending } = await Journal.open(join(dir!, 'queue'));
  await journal.close();
  return pending.length;
}

/** Restarts on the same directories with the store back, waits for the queue to drain, and checks every write applied exactly once, in order. */
async function expectAppliedOnce(accepted: Map<string, string[]>): Promise<void> {
  server = await startBaton(dir!, { BATON_QUEUE_REPLAY_MS: '50' }, 60_000, FLAG);
  const base = server.url;
  const deadline = Date.now() + 60_000;
  while (((await json(`${base}/readyz`)).body.queue as { depth: number }).depth > 0) {
    if (Date.now() > deadline) throw new Error('The queue did not drain after the restart.');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const [taskId, ids] of accepted) {
    const items = (await json(`${base}/v1/tasks/${taskId}/checkpoints?limit=100`)).body.items as { id: string }[];
    expect(items.map((c) => c.id)).toEqual([...ids].reverse());
    expect((await json(`${base}/v1/tasks/${taskId}/audit/verify`)).body).toEqual({ ok: true, entries: PER_TASK });
  }
  const events = await allEvents(base);
  const created = events.filter((e) => e.type === 'CHECKPOINT_CREATED').map((e) => e.subject);
  expect(created).toHaveLength(WRITES);
  expect(new Set(created).size).toBe(WRITES);
  expect(events.filter((e) => e.type === 'WRITE_DEAD_LETTERED')).toEqual([]);
}

it('replays the whole journal before it exits when the store answers within the grace period', { timeout: 180_000 }, async () => {
  const accepted = await queueWrites({ BATON_SHUTDOWN_GRACE_MS: '90000' });
  // The store answers again, slowly: the replay takes seconds, and the stop comes while it runs.
  expect((await faults(server!.url, { store: 'slow', latencyMs: 60 })).status).toBe(200);
  const stop = await terminate(server!);
  expect(stop.code).toBe(0);
  expect(stop.refusedWhileRunning).toBe(true);
  expect(server!.output()).toContain('stopping with writes queued');
  expect(await journalled()).toBe(0);
  await expectAppliedOnce(accepted);
});

it('keeps what the grace period left in the journal, and the next start applies it, each write once', { timeout: 180_000 }, async () => {
  const accepted = await queueWrites({ BATON_SHUTDOWN_GRACE_MS: '4000' });
  // Slow enough that 25 writes to one task cannot all apply within the grace period (25 x 400 ms = 10 s against 4 s), whatever else the machine runs.
  expect((await faults(server!.url, { store: 'slow', latencyMs: 400 })).status).toBe(200);
  const stop = await terminate(server!);
  expect(stop.code).toBe(0);
  expect(stop.refusedWhileRunning).toBe(true);
  expect(server!.output()).toContain('the shutdown grace period ended with writes queued');
  const left = await journalled();
  expect(left).toBeGreaterThan(0);
  expect(left).toBeLessThan(WRITES);
  await expectAppliedOnce(accepted);
});

it('waits out the grace period while the store stays down, then exits with every write in the journal for the next start', { timeout: 180_000 }, async () => {
  const accepted = await queueWrites({ BATON_SHUTDOWN_GRACE_MS: '1500' });
  const stop = await terminate(server!);
  expect(stop.code).toBe(0);
  expect(stop.ms).toBeGreaterThanOrEqual(1_400);
  expect(server!.output()).toContain('the shutdown grace period ended with writes queued');
  expect(await journalled()).toBe(WRITES);
  await expectAppliedOnce(accepted);
});
