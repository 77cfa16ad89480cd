/**
 * A write whose commit outcome the store could not learn (FoundationDB's
 * 1021, or 1031 during the commit) is run again and applied once: the
 * store's test hook reports a real commit as unknown. A create sent without
 * an Idempotency-Key is found by its checkpoint id (minted with the command)
 * and writes no operation record; any other write is answered from its
 * operation record.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { tenantKeyspace } from '../../src/store/keyspace.js';
import { auth, checkpointBody, TOKENS } from '../support/app.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** An app over a store whose next commit, once `arm()` is called, is reported unknown (it lands all the same). */
async function appWithUnknownCommit() {
  const dir = mkdtempSync(join(tmpdir(), 'baton-unknown-'));
  const state = { armed: false, unknownCommits: 0 };
  const store = LmdbStore.open({
    path: dir,
    hooks: {
      commitOutcomeUnknown: () => {
        if (!state.armed) return false;
        state.armed = false;
        state.unknownCommits += 1;
        return true;
      },
    },
  });
  const config = configSchema.parse({ dataDir: dir, tokens: `writer:${TOKENS.writer},auditor:${TOKENS.auditor}`, logLevel: 'silent' });
  const app = await buildApp({ config, store });
  await app.ready();
  cleanup = async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const operations = async (): Promise<unknown[]> => {
    const space = tenantKeyspace('default').operations;
    return (await store.transact((tx) => tx.getPrefix(space.prefix), { readOnly: true })).map((row) => space.unpack(row.key)[0]);
  };
  return { app, state, arm: () => void (state.armed = true), operations };
}

it('applies a create once when its commit is reported unknown, and answers it from the checkpoint its first commit wrote', async () => {
  const { app, state, arm, operations } = await appWithUnknownCommit();
  arm();
  const created = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('task-unknown') });
  expect(state.unknownCommits).toBe(1);
  expect(created.statusCode).toBe(201);
  const id = (created.json() as { id: string }).id;

  const history = (await app.inject({ method: 'GET', url: '/v1/tasks/task-unknown/checkpoints', headers: auth() })).json() as { items: { id: string }[] };
  expect(history.items.map((item) => item.id)).toEqual([id]);
  const audit = (await app.inject({ method: 'GET', url: '/v1/tasks/task-unknown/audit', headers: auth('auditor') })).json() as { items: { action: string }[] };
  expect(audit.items.map((entry) => entry.action)).toEqual(['checkpoint.created']);
  const events = (await app.inject({ method: 'GET', url: '/v1/events', headers: auth('auditor') })).json() as { items: { type: string; subject: string }[] };
  expect(events.items.filter((event) => event.type === 'CHECKPOINT_CREATED').map((event) => event.subject)).toEqual([id]);
  // The checkpoint's id, minted with the command, is what the rerun found: no operation record was written for it.
  expect(await operations()).toEqual([]);
});

it('applies an update once when its commit is reported unknown, and answers it from its operation record', async () => {
  const { app, state, arm, operations } = await appWithUnknownCommit();
  const created = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('task-unknown-update') });
  const id = (created.json() as { id: string }).id;
  arm();
  const updated = await app.inject({
    method: 'PATCH',
    url: `/v1/checkpoints/${id}`,
    headers: { ...auth(), 'content-type': 'application/merge-patch+json', 'if-match': '"1"' },
    payload: { labels: { step: 'two' } },
  });
  expect(state.unknownCommits).toBe(1);
  expect(updated.statusCode).toBe(200);
  expect((updated.json() as { version: number }).version).toBe(2);

  const read = (await app.inject({ method: 'GET', url: `/v1/checkpoints/${id}`, headers: auth() })).json() as { version: number; labels: Record<string, unknown> };
  expect(read.version).toBe(2);
  expect(read.labels.step).toBe('two');
  const audit = (await app.inject({ method: 'GET', url: '/v1/tasks/task-unknown-update/audit', headers: auth('auditor') })).json() as { items: { action: string }[] };
  expect(audit.items.map((entry) => entry.action)).toEqual(['checkpoint.created', 'checkpoint.updated']);
  expect(await operations()).toHaveLength(1);
});
