/**
 * Where a task's rows are (`docs/keyspace.md`, "Where a task's rows are"): a
 * new store puts a task's records, audit entries, history, `task` index entries and head under
 * `("tk", taskId)` and lists tasks through `("tl", taskId)`; a store written
 * before format 9 (its tasks in their own space, no layout row) keeps each kind in its
 * own space and is served as before, across restarts; while the layout is
 * unknown (the store was down when the instance started) reads answer 503,
 * writes wait in the write queue, and the layout is read once the store
 * answers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { decodeValue, encodeValue, keyLayout, systemKeyspace, tenantKeyspace, useKeyLayout, type KeyLayout } from '../../src/store/keyspace.js';
import { isCompressed } from '../../src/service/repository/compression.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { prefixRange } from '../../src/store/keyspace.js';
import { StoreError, type Store, type TransactionBody, type TransactOptions } from '../../src/store/store.js';
import { checkpointBody } from '../support/app.js';

const TOKEN = 'layout-writer-token-0123456789';
const headers = { authorization: `Bearer ${TOKEN}` };
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  useKeyLayout('task');
});

async function serve(dir: string): Promise<{ app: FastifyInstance; store: LmdbStore; stop(): Promise<void> }> {
  const store = LmdbStore.open({ path: dir });
  const config = configSchema.parse({ dataDir: dir, tokens: `writer:${TOKEN}`, logLevel: 'silent', indexer: 'off' });
  const app = await buildApp({ config, store });
  return {
    app,
    store,
    async stop() {
      await app.close();
      await store.close();
    },
  };
}

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-layout-'));
  dirs.push(dir);
  return dir;
}

/** How many keys the store holds under `prefix`. */
async function keysUnder(store: LmdbStore, prefix: Buffer): Promise<number> {
  const { begin, end } = prefixRange(prefix);
  return store.transact(async (tx) => (await tx.getRange(begin, end)).length, { readOnly: true });
}

async function storedLayout(store: LmdbStore): Promise<KeyLayout> {
  return store.transact(async (tx) => (decodeValue((await tx.get(systemKeyspace().layout.prefix))!) as { layout: KeyLayout }).layout, { readOnly: true });
}

/** Creates `count` checkpoints of each task, one after another. */
async function useIt(app: FastifyInstance, tasks: Record<string, number>): Promise<void> {
  for (const [taskId, count] of Object.entries(tasks)) {
    for (let i = 0; i < count; i++) {
      const res = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody(taskId, { recovery: { continuationPrompt: `step ${i} of ${taskId}` } }) });
      expect(res.statusCode, res.body).toBe(201);
    }
  }
}

async function expectServed(app: FastifyInstance, tasks: Record<string, number>): Promise<void> {
  const listed = (await app.inject({ method: 'GET', url: '/v1/tasks?limit=100', headers })).json() as { items: { taskId: string }[] };
  expect(listed.items.map((item) => item.taskId)).toEqual(Object.keys(tasks).sort());
  for (const [taskId, count] of Object.entries(tasks)) {
    const history = (await app.inject({ method: 'GET', url: `/v1/tasks/${taskId}/checkpoints?limit=100`, headers })).json() as { items: unknown[] };
    expect(history.items).toHaveLength(count);
    const latest = await app.inject({ method: 'GET', url: `/v1/tasks/${taskId}/checkpoints/latest`, headers });
    expect(latest.statusCode).toBe(200);
    expect(latest.json()).toMatchObject({ taskId, recovery: { continuationPrompt: `step ${count - 1} of ${taskId}` } });
    // Found by the `task` index (its entries among the task's rows in the `task` layout) from the first create on.
    const found = (await app.inject({ method: 'GET', url: `/v1/checkpoints?taskId=${taskId}&limit=100`, headers })).json() as { items: { taskId: string }[] };
    expect(found.items.map((item) => item.taskId)).toEqual(Array.from({ length: count }, () => taskId));
    const verified = (await app.inject({ method: 'GET', url: `/v1/tasks/${taskId}/audit/verify`, headers })).json() as { ok: boolean; entries: number };
    expect(verified).toMatchObject({ ok: true });
    expect(verified.entries).toBeGreaterThanOrEqual(count);
  }
}

describe('the key layout', () => {
  it('puts a new store’s task rows under their task, lists tasks through the task list, and keeps them across a restart', async () => {
    const dir = newDir();
    let served = await serve(dir);
    const tasks = { 'task-b': 3, 'task-a': 1, 'task-c': 2 };
    await useIt(served.app, tasks);
    await expectServed(served.app, tasks);
    expect(await storedLayout(served.store)).toBe('task');
    const ks = tenantKeyspace('default', 'task');
    expect(await keysUnder(served.store, ks.root.pack('tk', 'task-b'))).toBeGreaterThanOrEqual(3 * 4 + 1);
    expect(await keysUnder(served.store, ks.root.pack('tk', 'task-b', 'i'))).toBe(3);
    expect(await keysUnder(served.store, ks.root.pack('ix', 'task'))).toBe(0);
    expect(await keysUnder(served.store, ks.root.pack('tl'))).toBe(3);
    for (const old of ['cp', 'aud', 'hist', 'task']) expect(await keysUnder(served.store, ks.root.pack(old)), old).toBe(0);
    // A store filled without its layout row (by a process that wrote through the service layer alone) is read by where its tasks are.
    await served.store.transact(async (tx) => tx.clear(systemKeyspace().layout.prefix));
    await served.stop();

    served = await serve(dir);
    expect(keyLayout()).toBe('task');
    expect(await storedLayout(served.store)).toBe('task');
    const next = await served.app.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody('task-a', { recovery: { continuationPrompt: 'step 1 of task-a' } }) });
    expect(next.statusCode).toBe(201);
    await expectServed(served.app, { ...tasks, 'task-a': 2 });
    expect(await keysUnder(served.store, ks.root.pack('tl'))).toBe(3);
    await served.stop();
  });

  it('keeps the layout of a store written before format 9, and serves it as before', async () => {
    const dir = newDir();
    // A store a release before format 9 wrote: tasks in their own spaces, and no layout row. Written by
    // this version in that layout (the row set before it opens), then the row removed.
    const old = LmdbStore.open({ path: dir });
    await old.transact(async (tx) => tx.set(systemKeyspace().layout.prefix, encodeValue({ layout: 'spaces' })));
    await old.close();
    let served = await serve(dir);
    expect(keyLayout()).toBe('spaces');
    const tasks = { 'task-x': 2, 'task-w': 3 };
    await useIt(served.app, tasks);
    await served.store.transact(async (tx) => tx.clear(systemKeyspace().layout.prefix));
    await served.stop();

    served = await serve(dir);
    expect(keyLayout()).toBe('spaces');
    expect(await storedLayout(served.store)).toBe('spaces');
    await expectServed(served.app, tasks);
    const more = await served.app.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody('task-v', { recovery: { continuationPrompt: 'step 0 of task-v' } }) });
    expect(more.statusCode).toBe(201);
    const all = { ...tasks, 'task-v': 1 };
    await expectServed(served.app, all);
    const ks = tenantKeyspace('default', 'spaces');
    expect(await keysUnder(served.store, ks.root.pack('tk'))).toBe(0);
    expect(await keysUnder(served.store, ks.root.pack('tl'))).toBe(0);
    expect(await keysUnder(served.store, ks.root.pack('cp', 'task-w'))).toBe(3);
    expect(await keysUnder(served.store, ks.root.pack('hist', 'task-w'))).toBe(3);
    expect(await keysUnder(served.store, ks.root.pack('ix', 'task', 'task-w'))).toBe(3);
    expect(await keysUnder(served.store, ks.root.pack('task'))).toBe(3);
    // Its tenant's header says 8: a release of format 8 serves this store too, and reads its records, compressed as that release does (DEFLATE, method 1).
    expect(decodeValue(await served.store.transact(async (tx) => (await tx.get(ks.meta.pack('format')))!, { readOnly: true }))).toEqual({ format: 8, codec: 'msgpack' });
    const { begin, end } = prefixRange(ks.root.pack('cp'));
    const records = await served.store.transact(async (tx) => (await tx.getRange(begin, end)).map((row) => Buffer.from(row.value)), { readOnly: true });
    expect(records.filter(isCompressed).map((record) => record[2])).toEqual(records.map(() => 1));
    await served.stop();

    served = await serve(dir);
    expect(keyLayout()).toBe('spaces');
    await expectServed(served.app, all);
    await served.stop();
  });

  it('answers reads 503 and queues writes while the store’s layout is not known, and serves and replays them once it is', async () => {
    const dir = newDir();
    const served = await serve(dir);
    await useIt(served.app, { 'task-d': 1 });
    // What an instance started while its store was down is left with until the store answers.
    useKeyLayout('unknown');
    const read = await served.app.inject({ method: 'GET', url: '/v1/tasks/task-d/checkpoints/latest', headers });
    expect(read.statusCode).toBe(503);
    expect(read.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(read.json()).toMatchObject({ code: 'store_unavailable' });
    expect((await served.app.inject({ method: 'GET', url: '/v1/tasks?limit=10', headers })).statusCode).toBe(503);
    const queued = await served.app.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody('task-d', { recovery: { continuationPrompt: 'step 1 of task-d' } }) });
    expect(queued.statusCode, queued.body).toBe(202);
    useKeyLayout('task');
    const deadline = Date.now() + 15_000;
    while ((await served.app.inject({ method: 'GET', url: '/v1/tasks/task-d/checkpoints?limit=10', headers })).json().items.length < 2) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expectServed(served.app, { 'task-d': 2 });
    await served.stop();
  });

  it('reads the layout once a store that was down when the instance started answers', async () => {
    const dir = newDir();
    const store = new DownUntilUp(LmdbStore.open({ path: dir }));
    const config = configSchema.parse({ dataDir: dir, tokens: `writer:${TOKEN}`, logLevel: 'silent', indexer: 'off' });
    const app = await buildApp({ config, store });
    expect(keyLayout()).toBe('unknown');
    expect((await app.inject({ method: 'GET', url: '/v1/tasks?limit=10', headers })).statusCode).toBe(503);
    store.down = false;
    const deadline = Date.now() + 10_000;
    while (keyLayout() === 'unknown') {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(keyLayout()).toBe('task');
    await useIt(app, { 'task-e': 2 });
    await expectServed(app, { 'task-e': 2 });
    await app.close();
    await store.close();
  });
});

/** A real store that answers `unavailable` to every transaction while `down`, as FoundationDB does while it cannot be reached. */
class DownUntilUp implements Store {
  down = true;
  constructor(private readonly inner: Store) {}
  get name(): Store['name'] {
    return this.inner.name;
  }
  get commitOutcomeKnown(): boolean {
    return this.inner.commitOutcomeKnown;
  }
  transact<T>(body: TransactionBody<T>, options?: TransactOptions): Promise<T> {
    if (this.down) return Promise.reject(new StoreError('unavailable', 'The store cannot be reached.'));
    return this.inner.transact(body, options);
  }
  ping(): Promise<void> {
    return this.down ? Promise.reject(new StoreError('unavailable', 'The store cannot be reached.')) : this.inner.ping();
  }
  compact(): Promise<boolean> {
    return this.inner.compact();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
