/**
 * Index entries a create leaves to the indexer (store format 7,
 * `repository/indexes.ts`): a create writes its `all` and `task` entries
 * and puts the others (agent, agentType, phase, status, finalStatus, labels)
 * in its pending entry beside its words. Over the API, with the app's own
 * indexer off so that merges happen where the test says: a checkpoint is
 * found by every filter the moment its create answers, a finalize before the
 * merge is what the merge writes, a list too long to read is searched
 * through `all`, an entry an earlier format wrote (every index entry written
 * at its create, no index lines) is merged and found once, and a sealed
 * tenant's entries are blinded in the list and in the keys the merge writes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCheckpoint } from '../../src/domain/changes.js';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import { newId } from '../../src/domain/ids.js';
import { PENDING_LIMIT } from '../../src/service/indexer/limits.js';
import { keyspaceOf } from '../../src/service/repository/keyspace.js';
import { Repository, toStored } from '../../src/service/repository/repository.js';
import { mergePending } from '../support/insert.js';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../support/app.js';

async function send(t: TestApp, method: 'POST' | 'GET', url: string, payload?: unknown) {
  return t.app.inject({ method, url, headers: auth('admin'), ...(payload === undefined ? {} : { payload: payload as object }) });
}

async function found(t: TestApp, query: string, limit = 100): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < limit; pages++) {
    const res = await send(t, 'GET', `/v1/checkpoints?${query}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { items: { id: string }[]; nextCursor?: string };
    ids.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor;
    if (cursor === undefined) return ids;
  }
  throw new Error(`The search did not end in ${limit} pages (${ids.length} found).`);
}

/** The tenant's index keys, as `name value id` (the `task` index's among its task's rows in the `task` layout). */
async function indexKeys(t: TestApp, tenant = 'default'): Promise<string[]> {
  const { index, root } = keyspaceOf(tenant);
  const rows = (await t.store.transact((tx) => tx.getRange(root.range().begin, root.range().end), { readOnly: true })).filter((row) => index.contains(row.key));
  return rows.map((row) => index.unpack(row.key) as string[]).map(([name, value, , id]) => `${name} ${value} ${id}`).sort();
}

const PHASES = ['planning', 'implementing', 'testing', 'reviewing', 'handoff'];
const phaseOf = (n: number): string => PHASES[n % PHASES.length]!;

const FILTERS = (n: number) => [
  `agentId=agent-${n}`,
  `agentType=type-${n}`,
  `phase=${phaseOf(n)}`,
  `label.run=${n}`,
  `taskId=task-${n}`,
];

async function create(t: TestApp, n: number): Promise<string> {
  const res = await send(
    t,
    'POST',
    '/v1/checkpoints',
    checkpointBody(`task-${n}`, { agentId: `agent-${n}`, agentType: `type-${n}`, executionState: { phase: phaseOf(n), completedItems: [`step ${n}`] }, labels: { run: n } }),
  );
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: string }).id;
}

describe('index entries left to the indexer', () => {
  it('writes only the all and task entries at the create, finds the checkpoint by every filter before the merge, and writes the rest once', async () => {
    const t = await buildTestApp({ config: { indexer: 'off' } });
    try {
      const ids = [await create(t, 1), await create(t, 2), await create(t, 1)];
      expect(await indexKeys(t)).toEqual([`all  ${ids[0]}`, `all  ${ids[1]}`, `all  ${ids[2]}`, `task task-1 ${ids[0]}`, `task task-1 ${ids[2]}`, `task task-2 ${ids[1]}`].sort());
      const pending = await t.store.transact(async (tx) => (await new Repository(tx, 'default').terms.pending.list(100)).entries, { readOnly: true });
      expect(pending[0]!.index.map((entry) => `${entry.name} ${entry.value}`).sort()).toEqual(['agent agent-1', 'agentType type-1', 'label run=1', `phase ${phaseOf(1)}`, 'status active']);
      const expected = { 1: [ids[2]!, ids[0]!], 2: [ids[1]!] };
      for (const n of [1, 2] as const) for (const query of FILTERS(n)) expect(await found(t, query), query).toEqual(expected[n]);
      expect(await found(t, 'status=active')).toEqual([ids[2], ids[1], ids[0]]);
      // One merged, two waiting: found once each, newest first, across pages.
      await t.store.transact((tx) => import('../../src/service/indexer/indexer.js').then(({ mergeBatch }) => mergeBatch(new Repository(tx, 'default'), 1)));
      expect(await found(t, 'status=active')).toEqual([ids[2], ids[1], ids[0]]);
      await mergePending(t.store, 'default');
      for (const n of [1, 2] as const) for (const query of FILTERS(n)) expect(await found(t, query), query).toEqual(expected[n]);
      const keys = await indexKeys(t);
      for (const [i, n] of [[0, 1], [1, 2], [2, 1]] as const) {
        for (const key of [`agent agent-${n}`, `agentType type-${n}`, `phase ${phaseOf(n)}`, 'status active', `label run=${n}`]) expect(keys).toContain(`${key} ${ids[i]}`);
      }
      expect(keys).toHaveLength(3 * 7);
    } finally {
      await t.close();
    }
  });

  it('merges what a finalize made of a waiting checkpoint, and no entry of what it was', async () => {
    const t = await buildTestApp({ config: { indexer: 'off' } });
    try {
      const id = await create(t, 7);
      const res = await t.app.inject({ method: 'POST', url: `/v1/checkpoints/${id}/finalize`, headers: { ...auth('admin'), 'if-match': '"1"' }, payload: { status: 'completed' } });
      expect(res.statusCode, res.body).toBe(200);
      const { status, finalStatus } = res.json() as { status: string; finalStatus: string };
      expect(await found(t, 'status=active')).toEqual([]);
      expect(await found(t, `status=${status}`)).toEqual([id]);
      expect(await found(t, `finalStatus=${finalStatus}`)).toEqual([id]);
      await mergePending(t.store, 'default');
      const keys = await indexKeys(t);
      expect(keys.filter((key) => key.startsWith('status ') || key.startsWith('finalStatus '))).toEqual([`finalStatus ${finalStatus} ${id}`, `status ${status} ${id}`]);
      expect(await found(t, `status=${status}`)).toEqual([id]);
      expect(await found(t, `finalStatus=${finalStatus}`)).toEqual([id]);
    } finally {
      await t.close();
    }
  });

  it('searches through the all index when the list is longer than a search reads', { timeout: 120_000 }, async () => {
    const t = await buildTestApp({ config: { indexer: 'off' } });
    try {
      const tenant = 'default';
      // Straight into the store, as creates would: the list past what a search reads.
      await t.store.transact(async (tx) => {
        const repo = new Repository(tx, tenant);
        await repo.header.ensure();
        for (let i = 0; i <= PENDING_LIMIT; i++) {
          const input = checkpointInput.parse({ taskId: `bulk-${i}`, agentId: i === 5 ? 'rare-agent' : 'common-agent', executionState: { completedItems: ['bulk'] } });
          const checkpoint = buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString());
          await repo.checkpoints.insert(checkpoint, toStored(checkpoint).stored, 1, undefined, true);
        }
      });
      const waiting = await t.store.transact((tx) => new Repository(tx, tenant).terms.waiting(PENDING_LIMIT), { readOnly: true });
      expect(waiting).toBeUndefined();
      const ids = await found(t, 'agentId=rare-agent');
      expect(ids).toHaveLength(1);
      const read = await send(t, 'GET', `/v1/checkpoints/${ids[0]}`);
      expect((read.json() as { taskId: string }).taskId).toBe('bulk-5');
    } finally {
      await t.close();
    }
  });

  it('merges an entry an earlier format wrote (its create wrote every index entry) and finds it once', async () => {
    const t = await buildTestApp({ config: { indexer: 'off' } });
    try {
      const input = checkpointInput.parse({ taskId: 'old-1', agentId: 'old-agent', executionState: { completedItems: ['older format'] } });
      const checkpoint = buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1)).toISOString());
      await t.store.transact(async (tx) => {
        const repo = new Repository(tx, 'default');
        await repo.header.ensure();
        await repo.checkpoints.insert(checkpoint, toStored(checkpoint).stored, 1, undefined, true);
        // As format 6 left it: every entry written, the pending entry's words alone.
        const [entry] = (await repo.terms.pending.list(10)).entries;
        repo.index.update(undefined, checkpoint);
        repo.terms.pending.rewrite(entry!, entry!.words, []);
      });
      const created = await create(t, 3);
      expect(await found(t, 'agentId=old-agent')).toEqual([checkpoint.id]);
      expect(await found(t, 'q=older')).toEqual([checkpoint.id]);
      await mergePending(t.store, 'default');
      expect(await found(t, 'agentId=old-agent')).toEqual([checkpoint.id]);
      expect(await found(t, 'agentId=agent-3')).toEqual([created]);
      expect((await indexKeys(t)).filter((key) => key.endsWith(checkpoint.id))).toHaveLength(4);
    } finally {
      await t.close();
    }
  });

  it('keeps a sealed tenant’s waiting entries blinded, in the list and in the keys the merge writes', async () => {
    const keys = mkdtempSync(join(tmpdir(), 'deferred-keys-'));
    writeFileSync(join(keys, 'keys'), `k1:${randomBytes(32).toString('base64')}\n`);
    const t = await buildTestApp({ config: { indexer: 'off', encryptionKeyFile: join(keys, 'keys') } });
    try {
      const id = await create(t, 9);
      const { pendingList } = keyspaceOf('default');
      const raw = await t.store.transact((tx) => tx.getRange(pendingList.range().begin, pendingList.range().end), { readOnly: true });
      const bytes = Buffer.concat(raw.map((row) => Buffer.from(row.value)));
      for (const plain of ['agent-9', 'type-9', 'run=9']) expect(bytes.includes(Buffer.from(plain)), plain).toBe(false);
      expect(await found(t, 'agentId=agent-9')).toEqual([id]);
      await mergePending(t.store, 'default');
      const merged = (await indexKeys(t)).join('\n');
      for (const plain of ['agent-9', 'type-9', 'run=9']) expect(merged.includes(plain), plain).toBe(false);
      expect(await found(t, 'agentId=agent-9')).toEqual([id]);
      expect(await found(t, 'label.run=9')).toEqual([id]);
    } finally {
      await t.close();
      rmSync(keys, { recursive: true, force: true });
    }
  });
});
