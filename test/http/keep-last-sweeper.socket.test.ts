/**
 * The retention sweeper applies a task's `keepLast` by itself (DESIGN §4): a
 * task written past its policy's keepLast is compacted in the background
 * down to the newest keepLast checkpoints, audited and announced like
 * `POST …/compact`; a pass with nothing to remove writes nothing (it is not
 * a write of the task, so its expiry stays where its last write put it); a legal hold keeps
 * everything; the tenant default applies to tasks without a policy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { auth, buildTestApp, checkpointBody, type TestApp, type Who } from '../support/app.js';

let t: TestApp | undefined;
let base: string;

afterEach(async () => {
  t?.app.server.closeAllConnections();
  await t?.close();
  t = undefined;
});

async function start(config: Record<string, unknown> = {}): Promise<void> {
  t = await buildTestApp({ config: { retentionSweepMs: 30, ...config } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
}

async function call(method: string, path: string, body?: unknown, who: Who = 'admin'): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method, headers: { ...auth(who), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

async function createMany(taskId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const made = await call('POST', '/v1/checkpoints', checkpointBody(taskId, { labels: { n } }), 'writer');
    expect(made.status).toBe(201);
    ids.push(made.json.id as string);
  }
  return ids;
}

async function live(ids: readonly string[]): Promise<string[]> {
  const statuses = await Promise.all(ids.map(async (id) => [id, (await call('GET', `/v1/checkpoints/${id}`)).status] as const));
  return statuses.filter(([, status]) => status === 200).map(([id]) => id);
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

const actions = async (taskId: string) => ((await call('GET', `/v1/tasks/${taskId}/audit?limit=1000`)).json.items as { action: string }[]).map((e) => e.action);

describe('the retention sweeper’s keepLast', () => {
  it('compacts a task down to its policy’s keepLast, keeping the newest, audited, chain verifying, and later ticks write nothing', async () => {
    await start();
    const ids = await createMany('kept-three', 1);
    await call('PUT', '/v1/tasks/kept-three/policy', { keepLast: 3, expireAfter: 'P30D' });
    ids.push(...(await createMany('kept-three', 7)));
    await until(async () => (await live(ids)).length === 3, 'the sweeper to compact to 3');
    expect(await live(ids)).toEqual(ids.slice(-3));
    expect((await call('GET', `/v1/checkpoints/${ids[0]}`)).json).toMatchObject({ status: 410, code: 'checkpoint_compacted' });
    expect(await actions('kept-three')).toContain('task.compacted');
    expect((await call('GET', '/v1/tasks/kept-three/audit/verify')).json).toMatchObject({ ok: true });
    // Further ticks find nothing to remove and change nothing: no more audit entries, no write.
    const entries = (await actions('kept-three')).length;
    const updatedAt = (await call('GET', '/v1/tasks/kept-three')).json.updatedAt;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await actions('kept-three')).length).toBe(entries);
    expect((await call('GET', '/v1/tasks/kept-three')).json.updatedAt).toBe(updatedAt);
  });

  it('leaves a task under a legal hold whole, and compacts it once the hold is lifted', async () => {
    await start();
    await createMany('held', 1);
    await call('PUT', '/v1/tasks/held/policy', { keepLast: 2 });
    await call('PUT', '/v1/tasks/held/legal-hold', { reason: 'litigation 2026-17' });
    const ids = await createMany('held', 5);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await live(ids)).length).toBe(5);
    expect(await actions('held')).not.toContain('task.compacted');
    expect((await call('DELETE', '/v1/tasks/held/legal-hold', { reason: 'settled' })).status).toBe(200);
    await until(async () => (await live(ids)).length === 2, 'the sweeper to compact after the hold');
    expect(await live(ids)).toEqual(ids.slice(-2));
  });

  it('applies the tenant default (BATON_DEFAULT_KEEP_LAST) to tasks without a policy', async () => {
    await start({ defaultKeepLast: 2 });
    const ids = await createMany('defaulted', 5);
    await until(async () => (await live(ids)).length === 2, 'the default keepLast');
    expect(await live(ids)).toEqual(ids.slice(-2));
  });
});
