/**
 * A purge of any size, over many bounded transactions: a task of thousands
 * of checkpoints is purged batch by batch; `kill -9` in the middle, and the
 * restarted service's maintenance runner finishes it: every checkpoint gone,
 * one tombstone counting them all, the chain verifying. And expiry: a task
 * whose policy's `expireAfter` ran out is purged by the runner on its own.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auth, checkpointBody } from '../support/app.js';
import { removeDir, startBaton, tempDataDir, type RunningServer } from '../support/crash-server.js';
import { loadTask } from '../support/load.js';

const CHECKPOINTS = 100_000;
const dirs: string[] = [];
const running: RunningServer[] = [];

afterAll(() => {
  for (const server of running) server.child.kill('SIGKILL');
  for (const dir of dirs) removeDir(dir);
});

async function call(base: string, method: string, path: string, body?: unknown, who: 'writer' | 'admin' | 'auditor' = 'admin'): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method, headers: { ...auth(who), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

async function fill(base: string, taskId: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < count) {
        next += 1;
        expect((await call(base, 'POST', '/v1/checkpoints', checkpointBody(taskId), 'writer')).status).toBe(201);
      }
    }),
  );
}

describe('a purge in batches', () => {
  it('purges a task of 100,000 checkpoints over many transactions, and a kill -9 in the middle resumes and finishes', async () => {
    const dir = tempDataDir('baton-purge-');
    dirs.push(dir);
    // Written through the service layer in this process (a request loop would take minutes), then served.
    const started = performance.now();
    await loadTask(dir, 'big-task', CHECKPOINTS, (n) => ({ ...checkpointBody('big-task'), labels: { n } }));
    console.log(`purge test: ${CHECKPOINTS} checkpoints loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    // The request answers after its first batch; the runner goes on every 100 ms.
    const env = { BATON_PURGE_WAIT_MS: '0', BATON_RETENTION_SWEEP_MS: '100' };
    const first = await startBaton(dir, env);
    running.push(first);

    const purge = await call(first.url, 'DELETE', '/v1/tasks/big-task');
    expect(purge).toMatchObject({ status: 202, json: { taskId: 'big-task', purging: true } });
    // A write to the task while it is purged is refused, not mixed into the purge.
    expect((await call(first.url, 'POST', '/v1/checkpoints', checkpointBody('big-task'), 'writer')).status).toBe(409);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    const purgeStarted = performance.now();
    const second = await startBaton(dir, env);
    running.push(second);
    let left = -1;
    for (let i = 0; i < 6_000 && left !== 0; i++) {
      left = ((await call(second.url, 'GET', '/v1/tasks/big-task/checkpoints?limit=1')).json.items as unknown[]).length;
      if (left !== 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(left).toBe(0);
    // The checkpoints go first, then the task's runs (labels, paths and words), then the tombstone ends the purge.
    let entries = 0;
    for (let i = 0; i < 600 && entries !== CHECKPOINTS + 1; i++) {
      entries = (await call(second.url, 'GET', '/v1/tasks/big-task/audit/verify')).json.entries as number;
      if (entries !== CHECKPOINTS + 1) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    console.log(`purge test: the rest of the purge took ${((performance.now() - purgeStarted) / 1000).toFixed(1)} s after the restart`);
    const audit: { action: string; details?: { checkpoints?: number } }[] = [];
    for (let cursor: string | undefined, first = true; first || cursor !== undefined; first = false) {
      const page = (await call(second.url, 'GET', `/v1/tasks/big-task/audit?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json;
      audit.push(...(page.items as typeof audit));
      cursor = page.nextCursor as string | undefined;
    }
    const tombstones = audit.filter((e) => e.action === 'task.purged');
    expect(tombstones).toHaveLength(1);
    expect(tombstones[0]!.details).toEqual({ checkpoints: CHECKPOINTS });
    expect((await call(second.url, 'GET', '/v1/tasks/big-task/audit/verify')).json).toMatchObject({ ok: true, entries: CHECKPOINTS + 1 });
    // The task takes writes again.
    expect((await call(second.url, 'POST', '/v1/checkpoints', checkpointBody('big-task'), 'writer')).status).toBe(201);
  }, 600_000);

  it('purges a task past its expireAfter on its own, with the tombstone', async () => {
    const dir = tempDataDir('baton-expiry-');
    dirs.push(dir);
    const server = await startBaton(dir, { BATON_RETENTION_SWEEP_MS: '100' });
    running.push(server);
    await fill(server.url, 'short-lived', 3);
    await fill(server.url, 'long-lived', 2);
    expect((await call(server.url, 'PUT', '/v1/tasks/short-lived/policy', { expireAfter: 'PT1S' })).status).toBe(200);
    expect((await call(server.url, 'PUT', '/v1/tasks/long-lived/policy', { expireAfter: 'P1D' })).status).toBe(200);
    let left = -1;
    for (let i = 0; i < 100 && left !== 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      left = ((await call(server.url, 'GET', '/v1/tasks/short-lived/checkpoints')).json.items as unknown[]).length;
    }
    expect(left).toBe(0);
    const audit = (await call(server.url, 'GET', '/v1/tasks/short-lived/audit')).json.items as { action: string; actor: { subject: string } }[];
    expect(audit.at(-1)).toMatchObject({ action: 'task.purged', actor: { subject: 'baton:retention-sweeper' } });
    expect(((await call(server.url, 'GET', '/v1/tasks/long-lived/checkpoints')).json.items as unknown[]).length).toBe(2);
  });
});
