/**
 * The store header and the journal's validation: what this version did not
 * write is refused in one sentence, never misread. A tenant's first write
 * leaves the header `{ format: 11, codec: 'msgpack' }` in a new store (whose tasks' rows are in the `task` layout) (a format-1 header, written
 * before records were compressed, a format-2 one, written before expiry
 * entries were bucketed, a format-3 one, written before the full-text
 * pending list, a format-4 one, whose pending list was kept by task, and a
 * format-5 one, whose runs ended in their own keys, and a format-6 one, whose
 * creates wrote every index entry, and a format-7 one, whose open runs were
 * written a line a word, a format-8 one, whose store kept each kind of a task's rows in its own space, and a
 * format-9 one, whose merges ended each run in a key of its own, and a format-10 one, whose records were compressed
 * with DEFLATE only, are raised to 11); a store
 * whose header
 * names a newer format takes no write (503 store_format_unsupported); a
 * journal record that is not a command this version knows stops the queue
 * from opening, naming the record.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { Journal } from '../../src/queue/journal.js';
import { WriteQueue } from '../../src/queue/write-queue.js';
import { decodeValue, encodeValue, tenantKeyspace } from '../../src/store/keyspace.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { buildApp } from '../../src/app.js';
import { checkpointBody } from '../support/app.js';
import { configSchema } from '../../src/config.js';

describe('the store header', () => {
  it('is written by a tenant’s first write, and a newer format is refused without writing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-format-'));
    let store = LmdbStore.open({ path: dir });
    const config = configSchema.parse({ dataDir: dir, tokens: 'writer:format-writer-token-0123456789', logLevel: 'silent' });
    const headers = { authorization: 'Bearer format-writer-token-0123456789' };
    const key = tenantKeyspace('default').meta.pack('format');
    let app = await buildApp({ config, store });
    expect((await app.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody('t-1') })).statusCode).toBe(201);
    expect(decodeValue(await store.transact(async (tx) => (await tx.get(key))!))).toEqual({ format: 11, codec: 'msgpack' });
    await app.close();

    // Earlier releases wrote format 1 to 10: this version reads each and raises it before its first write.
    for (const [format, written] of [
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 5],
      [5, 6],
      [6, 7],
      [7, 8],
      [8, 9],
      [9, 10],
      [10, 11],
    ] as const) {
      await store.transact(async (tx) => tx.set(key, encodeValue({ format, codec: 'msgpack' })));
      await store.close();
      store = LmdbStore.open({ path: dir });
      app = await buildApp({ config, store });
      expect((await app.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody('t-1') })).statusCode).toBe(201);
      expect(((await app.inject({ method: 'GET', url: '/v1/tasks/t-1/checkpoints', headers })).json() as { items: unknown[] }).items).toHaveLength(written);
      expect(decodeValue(await store.transact(async (tx) => (await tx.get(key))!))).toEqual({ format: 11, codec: 'msgpack' });
      await app.close();
    }

    // A newer Baton wrote this store: this version, started again, must not write to it.
    await store.transact(async (tx) => tx.set(key, encodeValue({ format: 12, codec: 'msgpack' })));
    await store.close();
    store = LmdbStore.open({ path: dir });
    app = await buildApp({ config, store });
    const refused = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody('t-2') });
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toMatchObject({ code: 'store_format_unsupported' });
    expect((await app.inject({ method: 'GET', url: '/v1/tasks/t-2', headers })).statusCode).toBe(404);
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops a running instance from writing the moment another raises the format (checked in every write transaction)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-format-'));
    const store = LmdbStore.open({ path: dir });
    const config = configSchema.parse({ dataDir: dir, tokens: 'writer:format-writer-token-0123456789', logLevel: 'silent' });
    const headers = { authorization: 'Bearer format-writer-token-0123456789' };
    const key = tenantKeyspace('default').meta.pack('format');
    const app = await buildApp({ config, store });
    expect((await app.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody('running-1') })).statusCode).toBe(201);
    // A newer Baton over the same store (another instance on FoundationDB) raises the format while this one runs.
    await store.transact(async (tx) => tx.set(key, encodeValue({ format: 12, codec: 'msgpack' })));
    const refused = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody('running-1') });
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toMatchObject({ code: 'store_format_unsupported' });
    expect((await app.inject({ method: 'GET', url: '/v1/tasks/running-1/checkpoints', headers })).json()).toMatchObject({ items: [{}] });
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a write queue whose journal holds what is not a command from opening, naming the record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-journal-'));
    const { journal } = await Journal.open(dir);
    await journal.append({ enqueuedAt: '2026-11-24T00:00:00.000Z', command: { kind: 'checkpoint.create', operationId: 'op:1' } });
    await journal.close();
    const opening = WriteQueue.open({ dir, maxBytes: 1024 * 1024 });
    await expect(opening).rejects.toBeInstanceOf(ConfigError);
    await expect(WriteQueue.open({ dir, maxBytes: 1024 * 1024 })).rejects.toThrow(/record 1, command\.\w+/);
    rmSync(dir, { recursive: true, force: true });
  });
});
