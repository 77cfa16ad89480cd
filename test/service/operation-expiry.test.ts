/**
 * Operation records expire: an Idempotency-Key repeated within the retention
 * window gets the first answer; after the sweeper deleted its record, the same
 * key is a new operation. Sweeps run in bounded batches. A purge under an
 * Idempotency-Key, whose batches are operations of their own, leaves no
 * record behind once swept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { configSchema } from '../../src/config.js';
import { sweepOperations } from '../../src/service/operation-sweeper.js';
import { Repository } from '../../src/service/repository/repository.js';
import { systemKeyspace, tenantKeyspace } from '../../src/store/keyspace.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { auth, checkpointBody, TOKENS } from '../support/app.js';

const DAY = 24 * 60 * 60 * 1000;
let cleanup: (() => Promise<void>) | undefined;

afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/**
 * The real app over LMDB, whose clock runs `offset.ms` ahead of the real one;
 * `asFoundationDb` opens the store as one whose commit outcomes may be
 * unknown, so the service records every write's operation, as on FoundationDB.
 */
async function appWithClock(offset: { ms: number }, sweepMs = 60_000, asFoundationDb = false): Promise<{ app: FastifyInstance; store: LmdbStore }> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-opx-'));
  const config = configSchema.parse({ dataDir: dir, tokens: `writer:${TOKENS.writer},admin:${TOKENS.admin}`, logLevel: 'silent', operationSweepMs: sweepMs });
  const store = LmdbStore.open({ path: dir, ...(asFoundationDb ? { hooks: { commitOutcomeUnknown: () => false } } : {}) });
  const app = await buildApp({ config, store, now: () => new Date(Date.now() + offset.ms) });
  await app.ready();
  cleanup = async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { app, store };
}

function create(app: FastifyInstance, key: string) {
  return app.inject({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), 'idempotency-key': key }, payload: checkpointBody('task-opx') });
}

const expiryEntries = (store: LmdbStore) => store.transact((tx) => tx.getPrefix(systemKeyspace().operationExpiry.prefix), { readOnly: true });

describe('operation records past the retention window', () => {
  it('answer a key repeated within the window from its record, and treat it as a new operation after the sweep', async () => {
    const { app, store } = await appWithClock({ ms: 0 });
    const first = await create(app, 'retry-me');
    expect(first.statusCode).toBe(201);
    const again = await create(app, 'retry-me');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await expiryEntries(store)).toHaveLength(1);

    // Nothing is a day old yet.
    expect(await sweepOperations(standaloneContext(store), Date.now() - DAY)).toBe(0);
    expect((await create(app, 'retry-me')).headers['idempotent-replayed']).toBe('true');

    expect(await sweepOperations(standaloneContext(store), Date.now() + 1)).toBe(1);
    expect(await expiryEntries(store)).toEqual([]);
    const idem = tenantKeyspace('default').idempotency;
    expect(await store.transact((tx) => tx.getPrefix(idem.prefix), { readOnly: true })).toEqual([]);
    const later = await create(app, 'retry-me');
    expect(later.statusCode).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect((later.json() as { id: string }).id).not.toBe((first.json() as { id: string }).id);
  });

  it('are deleted by the sweeper the app runs, once its clock passes the window', async () => {
    const clock = { ms: 0 };
    const { app, store } = await appWithClock(clock, 20);
    expect((await create(app, 'swept')).statusCode).toBe(201);
    await sleep(100);
    expect(await expiryEntries(store)).toHaveLength(1);
    clock.ms = DAY + 1_000;
    for (let i = 0; i < 100 && (await expiryEntries(store)).length > 0; i++) await sleep(20);
    expect(await expiryEntries(store)).toEqual([]);
    expect((await create(app, 'swept')).headers['idempotent-replayed']).toBeUndefined();
  });

  it('are deleted in batches of 500, each its own transaction', async () => {
    const { store } = await appWithClock({ ms: 0 });
    for (let from = 0; from < 1_200; from += 400) {
      await store.transact(async (tx) => {
        const repo = new Repository(tx, 'default');
        for (let i = from; i < from + 400; i++) await repo.operations.once(`op:${i}`, false, '', async () => i);
      });
    }
    expect(await sweepOperations(standaloneContext(store), Date.now() + 1, 1)).toBe(500);
    expect(await expiryEntries(store)).toHaveLength(700);
    expect(await sweepOperations(standaloneContext(store), Date.now() + 1)).toBe(700);
    expect(await expiryEntries(store)).toEqual([]);
    expect(await store.transact((tx) => tx.getPrefix(tenantKeyspace('default').operations.prefix), { readOnly: true })).toEqual([]);
  });

  it('leave nothing behind for a purge under an Idempotency-Key, whose batches record operations of their own', { timeout: 60_000 }, async () => {
    const { app, store } = await appWithClock({ ms: 0 }, 60_000, true);
    // More checkpoints than one purge batch looks at (200), so the purge takes several batches.
    for (let i = 0; i < 250; i++) expect((await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('purged-task') })).statusCode).toBe(201);
    const purge = await app.inject({ method: 'DELETE', url: '/v1/tasks/purged-task', headers: { ...auth('admin'), 'idempotency-key': 'purge-once' } });
    expect(purge.statusCode).toBe(204);
    const ks = tenantKeyspace('default');
    /** The operation ids recorded in `space`. */
    const recorded = async (space: typeof ks.operations) => (await store.transact((tx) => tx.getPrefix(space.prefix), { readOnly: true })).map((row) => space.unpack(row.key)[0]);
    // The purge's batches were recorded beside the request's own key (the creates none: a create's checkpoint id is its record).
    expect((await recorded(ks.operations)).length).toBeGreaterThan(0);
    expect(await recorded(ks.idempotency)).toEqual(['key:purge-once']);

    await sweepOperations(standaloneContext(store), Date.now() + 1);
    expect(await expiryEntries(store)).toEqual([]);
    expect(await recorded(ks.idempotency)).toEqual([]);
    expect(await recorded(ks.operations)).toEqual([]);
  });

  it('sweep the batch records earlier releases kept under a client’s key among the operations', async () => {
    const { store } = await appWithClock({ ms: 0 });
    await store.transact(async (tx) => {
      const repo = new Repository(tx, 'default');
      await repo.operations.once('key:old-purge', true, '', async () => 'purge');
      await repo.operations.once('key:old-purge:1', false, '', async () => 'batch');
    });
    expect(await sweepOperations(standaloneContext(store), Date.now() + 1)).toBe(2);
    const ks = tenantKeyspace('default');
    expect(await store.transact((tx) => tx.getPrefix(ks.operations.prefix), { readOnly: true })).toEqual([]);
    expect(await store.transact((tx) => tx.getPrefix(ks.idempotency.prefix), { readOnly: true })).toEqual([]);
  });
});
