/**
 * Encryption at rest as stored, read straight from the LMDB file: each
 * tenant's values are sealed with its own key (the last line for it), others
 * with the last shared line; a sealed record copied under another record's
 * key does not open there (its key is the associated data), so the read
 * answers 409 checkpoint_corrupted instead of the other record's content.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { configSchema } from '../../../src/config.js';
import { sealedKeyId } from '../../../src/crypto/keyring.js';
import { tenantKeyspace } from '../../../src/store/keyspace.js';
import { LmdbStore } from '../../../src/store/lmdb.js';
import { auth, checkpointBody, TOKENS } from '../../support/app.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-keys-'));
let app: FastifyInstance;
let store: LmdbStore;

beforeAll(async () => {
  const key = () => randomBytes(32).toString('base64');
  writeFileSync(join(dir, 'keys'), `shared-old:${key()}\nacme-only:${key()}:acme\nshared-new:${key()}\n`);
  const config = configSchema.parse({
    dataDir: join(dir, 'data'),
    tokens: `writer:${TOKENS.writer},writer:${TOKENS.acmeWriter}:acme`,
    logLevel: 'silent',
    encryptionKeyFile: join(dir, 'keys'),
  });
  store = LmdbStore.open({ path: config.dataDir });
  app = await buildApp({ config, store });
});
afterAll(async () => {
  await app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function create(who: 'writer' | 'acmeWriter', taskId: string): Promise<string> {
  const made = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(who), payload: checkpointBody(taskId) });
  expect(made.statusCode).toBe(201);
  return made.json().id as string;
}

/** The raw stored value of a checkpoint's current version (kept whole: chunk 0). */
const recordKey = (tenant: string, taskId: string, id: string) => tenantKeyspace(tenant).checkpoints.pack(taskId, id, 0);
const raw = (key: Buffer) => store.transact(async (tx) => tx.get(key), { readOnly: true });

it('seals each tenant’s values with its own newest key, and the others with the newest shared one', async () => {
  const mine = await create('writer', 'default-task');
  const theirs = await create('acmeWriter', 'acme-task');
  expect(sealedKeyId((await raw(recordKey('default', 'default-task', mine)))!)).toBe('shared-new');
  expect(sealedKeyId((await raw(recordKey('acme', 'acme-task', theirs)))!)).toBe('acme-only');
  const head = await raw(tenantKeyspace('acme').tasks.pack('acme-task', 0));
  expect(sealedKeyId(head!)).toBe('acme-only');
});

it('does not open a sealed record copied under another record’s key: the read is 409 checkpoint_corrupted', async () => {
  const a = await create('writer', 'moved-task');
  const b = await create('writer', 'moved-task');
  const bytesOfA = (await raw(recordKey('default', 'moved-task', a)))!;
  await store.transact(async (tx) => tx.set(recordKey('default', 'moved-task', b), bytesOfA));
  const read = await app.inject({ method: 'GET', url: `/v1/checkpoints/${b}`, headers: auth() });
  expect(read.statusCode).toBe(409);
  expect(read.json()).toMatchObject({ code: 'checkpoint_corrupted' });
  expect((await app.inject({ method: 'GET', url: `/v1/checkpoints/${a}`, headers: auth() })).statusCode).toBe(200);
});
