/**
 * Retention, legal hold and compaction over a real socket (DESIGN §3, §4):
 * nothing goes before its retention ends or while a hold applies, every
 * change is on the audit chain, and compaction keeps what must stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, buildTestApp, checkpointBody, type TestApp, type Who } from '../support/app.js';
import { tamper } from './protocol/helpers.js';

let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await buildTestApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  t.app.server.closeAllConnections();
  await t.close();
});

async function call(method: string, path: string, body?: unknown, who: Who = 'admin', headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method, headers: { ...auth(who), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

async function create(taskId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const made = await call('POST', '/v1/checkpoints', checkpointBody(taskId, extra), 'writer');
  expect(made.status).toBe(201);
  return made.json.id as string;
}

async function historyIds(taskId: string): Promise<string[]> {
  return ((await call('GET', `/v1/tasks/${taskId}/checkpoints`)).json.items as { id: string }[]).map((c) => c.id);
}

async function auditActions(taskId: string): Promise<string[]> {
  return ((await call('GET', `/v1/tasks/${taskId}/audit?limit=1000`)).json.items as { action: string }[]).map((e) => e.action);
}

describe('retention and legal hold', () => {
  it('refuses a purge while the task’s retention runs (409 retention_active), and keeps everything', async () => {
    await create('kept-task');
    expect((await call('PUT', '/v1/tasks/kept-task/policy', { retention: 'P30D' })).json).toMatchObject({ policy: { retention: 'P30D' }, effective: { retention: 'P30D' }, legalHold: null });
    const purge = await call('DELETE', '/v1/tasks/kept-task');
    expect(purge).toMatchObject({ status: 409, json: { code: 'retention_active' } });
    expect(await historyIds('kept-task')).toHaveLength(1);
  });

  it('refuses a purge under a legal hold (409 legal_hold); after lifting it the purge is 204 and the chain verifies with hold, release and tombstone', async () => {
    await create('held-task');
    await create('held-task');
    expect((await call('PUT', '/v1/tasks/held-task/legal-hold', { reason: 'litigation 2026-117' })).json).toMatchObject({ legalHold: { reason: 'litigation 2026-117' } });
    expect(await call('DELETE', '/v1/tasks/held-task')).toMatchObject({ status: 409, json: { code: 'legal_hold', reason: 'litigation 2026-117' } });
    expect(await call('POST', '/v1/tasks/held-task/compact', { keepLast: 1 })).toMatchObject({ status: 409, json: { code: 'legal_hold' } });
    expect(await historyIds('held-task')).toHaveLength(2);

    expect((await call('DELETE', '/v1/tasks/held-task/legal-hold')).json).toMatchObject({ legalHold: null });
    expect((await call('DELETE', '/v1/tasks/held-task')).status).toBe(204);
    expect(await historyIds('held-task')).toEqual([]);
    expect(await auditActions('held-task')).toEqual(['checkpoint.created', 'checkpoint.created', 'task.legal_hold_placed', 'task.legal_hold_released', 'task.purged']);
    expect((await call('GET', '/v1/tasks/held-task/audit/verify')).json).toMatchObject({ ok: true, entries: 5 });
  });

  it('is for admins to change, for everyone to read; expireAfter below retention is refused naming the field', async () => {
    await create('policy-task');
    expect((await call('PUT', '/v1/tasks/policy-task/policy', { keepLast: 3 }, 'writer')).status).toBe(403);
    expect((await call('PUT', '/v1/tasks/policy-task/legal-hold', { reason: 'x' }, 'writer')).status).toBe(403);
    const bad = await call('PUT', '/v1/tasks/policy-task/policy', { retention: 'P30D', expireAfter: 'P7D' });
    expect(bad).toMatchObject({ status: 400, json: { code: 'validation_failed', errors: [expect.objectContaining({ field: 'expireAfter' })] } });
    expect((await call('PUT', '/v1/tasks/policy-task/policy', { retention: 'P1X' })).status).toBe(400);
    await call('PUT', '/v1/tasks/policy-task/policy', { keepLast: 3, expireAfter: 'P90D' });
    expect((await call('PUT', '/v1/tasks/policy-task/policy', { keepLast: null })).json).toMatchObject({ policy: { expireAfter: 'P90D' } });
    expect((await call('GET', '/v1/tasks/policy-task/policy', undefined, 'auditor')).json).toMatchObject({ policy: { expireAfter: 'P90D' }, legalHold: null });
    expect(await auditActions('policy-task')).toEqual(['checkpoint.created', 'task.policy_set', 'task.policy_set']);
    expect((await call('GET', '/v1/tasks/no-such/policy')).status).toBe(404);
  });
});

describe('compaction', () => {
  it('a dry run removes nothing', async () => {
    for (let i = 0; i < 5; i++) await create('dry-task');
    const before = await historyIds('dry-task');
    const dry = await call('POST', '/v1/tasks/dry-task/compact', { keepLast: 1, dryRun: true });
    expect(dry).toMatchObject({ status: 200, json: { dryRun: true } });
    expect(dry.json.removed).toHaveLength(4);
    expect(await historyIds('dry-task')).toEqual(before);
    expect(await auditActions('dry-task')).not.toContain('task.compacted');
  });

  it('keeps the latest, the recovery point, the open handoff’s and the lease holder’s; removed ids are 410; lineage still reaches the root; the chain verifies', async () => {
    const task = 'compact-task';
    // A chain of six, each the child of the one before: root → … → c5.
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await create(task, i === 0 ? {} : { parentId: ids[i - 1], recovery: { continuationPrompt: `step ${i}`, lastSuccessfulState: ids[i - 1] } }));
    // c3 finalized by a handoff still waiting to be acknowledged: an open handoff needs it.
    const { json } = await call('POST', `/v1/checkpoints/${ids[3]}/handoff`, { trigger: 'explicit' }, 'writer');
    const handoffId = (json.handoff as { id: string }).id;

    const result = await call('POST', `/v1/tasks/${task}/compact`, { keepLast: 1 });
    expect(result.status).toBe(200);
    const kept = new Map((result.json.kept as { id: string; reason: string }[]).map((k) => [k.id, k.reason]));
    expect(kept.get(ids[5]!)).toBe('latest');
    expect(kept.get(ids[3]!)).toBe('open_handoff');
    expect([...(result.json.removed as string[])].sort()).toEqual([ids[0], ids[1], ids[2], ids[4]].sort());

    const removed = await call('GET', `/v1/checkpoints/${ids[1]}`, undefined, 'writer');
    expect(removed).toMatchObject({ status: 410, json: { code: 'checkpoint_compacted', checkpointId: ids[1] } });
    expect((await call('PATCH', `/v1/checkpoints/${ids[1]}`, { labels: { x: 1 } }, 'writer', { 'if-match': '"1"' })).status).toBe(410);
    expect(await historyIds(task)).toEqual([ids[5], ids[3]]);

    // The lineage of what is kept still reaches its root, through stubs.
    const lineage = (await call('GET', `/v1/checkpoints/${ids[5]}/lineage`)).json as { ancestors: { id: string; compacted?: boolean }[] };
    expect(lineage.ancestors.map((a) => a.id)).toEqual([ids[4], ids[3], ids[2], ids[1], ids[0]]);
    expect(lineage.ancestors.filter((a) => a.compacted).map((a) => a.id)).toEqual([ids[4], ids[2], ids[1], ids[0]]);

    const audit = await auditActions(task);
    expect(audit.at(-1)).toBe('task.compacted');
    expect((await call('GET', `/v1/tasks/${task}/audit/verify`)).json).toMatchObject({ ok: true });
    // The handoff can still be taken: its checkpoint is there.
    expect((await call('POST', `/v1/handoffs/${handoffId}/ack`, { agentId: 'next' }, 'writer')).status).toBe(200);
    // A later purge takes what compaction left behind too.
    expect((await call('DELETE', `/v1/tasks/${task}`)).status).toBe(204);
    expect((await call('GET', `/v1/checkpoints/${ids[1]}`, undefined, 'writer')).status).toBe(404);
  });

  it('keeps the lease holder’s newest, and what a checkpoint’s own retention covers', async () => {
    const task = 'leased-task';
    const mine = await create(task, { agentId: 'holder', compliance: { retentionPolicy: 'P1Y' } });
    const leased = await call('POST', `/v1/tasks/${task}/lease`, { agentId: 'holder', ttlMs: 60_000 }, 'writer');
    expect(leased.status).toBe(201);
    const epoch = String((leased.json as { epoch: number }).epoch);
    expect((await call('POST', '/v1/checkpoints', checkpointBody(task, { agentId: 'holder' }), 'writer')).status).toBe(428);
    const a = await call('POST', '/v1/checkpoints', checkpointBody(task, { agentId: 'holder' }), 'writer', { 'baton-lease-epoch': epoch });
    const b = await call('POST', '/v1/checkpoints', checkpointBody(task, { agentId: 'other' }), 'writer', { 'baton-lease-epoch': epoch });
    const result = await call('POST', `/v1/tasks/${task}/compact`, { keepLast: 1 });
    const kept = new Map((result.json.kept as { id: string; reason: string }[]).map((k) => [k.id, k.reason]));
    expect(kept.get(b.json.id as string)).toBe('latest');
    expect(kept.get(a.json.id as string)).toBe('live_lease');
    expect(kept.get(mine)).toBe('retention');
    expect(result.json.removed).toEqual([]);
  });

  it('keeps the recovery point when it is not the latest: a corrupt newest checkpoint before an older one that verifies', async () => {
    const task = 'corrupt-newest-task';
    const oldest = await create(task);
    const good = await create(task, { parentId: oldest });
    const newest = await create(task, { parentId: good, recovery: { continuationPrompt: 'go on', lastSuccessfulState: good } });
    await tamper(t, { taskId: task, id: newest });
    expect(((await call('GET', `/v1/tasks/${task}/recovery-point`, undefined, 'writer')).json.checkpoint as { id: string }).id).toBe(good);

    const result = await call('POST', `/v1/tasks/${task}/compact`, { keepLast: 1 });
    expect(result.status).toBe(200);
    const kept = new Map((result.json.kept as { id: string; reason: string }[]).map((k) => [k.id, k.reason]));
    expect(kept.get(newest)).toBe('latest');
    expect(kept.get(good)).toBe('recovery_point');
    expect(result.json.removed).toEqual([oldest]);
    // A recovery still starts from it.
    const recovery = await call('POST', `/v1/tasks/${task}/recoveries`, { reason: 'crashed', failure: { kind: 'crash' } }, 'writer');
    expect(recovery).toMatchObject({ status: 201, json: { recovery: { status: 'initiated', checkpointId: good } } });
  });

  it('keeps the checkpoint an initiated recovery started from, so its completion still checks the code version', async () => {
    const task = 'recovering-task';
    const source = await create(task, { codeVersion: 'graph:v1' });
    const started = await call('POST', `/v1/tasks/${task}/recoveries`, { reason: 'crashed', failure: { kind: 'crash' } }, 'writer');
    expect(started).toMatchObject({ status: 201, json: { recovery: { status: 'initiated', checkpointId: source } } });
    const recoveryId = (started.json.recovery as { id: string }).id;
    // Newer checkpoints land before the recovering agent takes over: the source is neither the latest nor the recovery point.
    await create(task, { codeVersion: 'graph:v2' });
    const latest = await create(task, { codeVersion: 'graph:v2' });

    const result = await call('POST', `/v1/tasks/${task}/compact`, { keepLast: 1 });
    expect(result.status).toBe(200);
    const kept = new Map((result.json.kept as { id: string; reason: string }[]).map((k) => [k.id, k.reason]));
    expect(kept.get(latest)).toBe('latest');
    expect(kept.get(source)).toBe('open_recovery');
    expect((await call('GET', `/v1/checkpoints/${source}`, undefined, 'writer')).status).toBe(200);

    const clash = await call('POST', `/v1/recoveries/${recoveryId}/complete`, { agentId: 'rescuer', codeVersion: 'graph:v3' }, 'writer');
    expect(clash).toMatchObject({ status: 409, json: { code: 'code_version_mismatch', codeVersion: 'graph:v1' } });
    expect((await call('POST', `/v1/recoveries/${recoveryId}/complete`, { agentId: 'rescuer', codeVersion: 'graph:v1' }, 'writer')).status).toBe(200);
    // Completed, the recovery no longer needs its source: the next compaction may take it.
    const after = await call('POST', `/v1/tasks/${task}/compact`, { keepLast: 1 });
    expect(after.json.removed).toContain(source);
  });

  it('needs a keepLast from the body or the policy', async () => {
    await create('no-keep');
    expect(await call('POST', '/v1/tasks/no-keep/compact', {})).toMatchObject({ status: 400, json: { code: 'validation_failed', errors: [expect.objectContaining({ field: 'keepLast' })] } });
  });
});
