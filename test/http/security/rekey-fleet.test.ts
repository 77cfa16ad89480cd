/**
 * A re-seal on one instance retires no key another instance still needs
 * (DESIGN §10): instance A (`k1`, then `k2`, which seals) re-seals the store
 * while instance B still seals with `k1`; the pass keeps `k1`. Once B stops
 * with an empty queue, the next pass retires it. A stopped instance whose
 * queue still holds writes keeps their keys from being retired.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { configSchema } from '../../../src/config.js';
import { LmdbStore } from '../../../src/store/lmdb.js';
import { auth, checkpointBody, TOKENS } from '../../support/app.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-rekey-fleet-'));
const k1 = `k1:${randomBytes(32).toString('base64')}`;
const k2 = `k2:${randomBytes(32).toString('base64')}`;
let store: LmdbStore;

async function instance(name: string, lines: string[], extra: Record<string, unknown> = {}): Promise<FastifyInstance> {
  writeFileSync(join(dir, `keys-${name}`), `${lines.join('\n')}\n`);
  const config = configSchema.parse({
    dataDir: join(dir, 'data'),
    queueDir: join(dir, `queue-${name}`),
    tokens: `writer:${TOKENS.writer},admin:${TOKENS.admin}`,
    logLevel: 'silent',
    encryptionKeyFile: join(dir, `keys-${name}`),
    ...extra,
  });
  return buildApp({ config, store, faultInjection: true });
}

async function rekey(app: FastifyInstance): Promise<{ retired: string[] }> {
  expect((await app.inject({ method: 'POST', url: '/v1/admin/rekey', headers: auth('admin'), payload: {} })).statusCode).toBe(202);
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    const status = (await app.inject({ method: 'GET', url: '/v1/admin/rekey', headers: auth('admin') })).json() as { state: string; retired: string[] };
    if (status.state === 'done') return status;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('The rekey pass did not finish in time.');
}

beforeAll(() => {
  store = LmdbStore.open({ path: join(dir, 'data') });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('keeps a key another running instance seals with, and retires it once that instance has stopped', async () => {
  const b = await instance('b', [k1]);
  expect((await b.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('rekey-fleet') })).statusCode).toBe(201);
  const a = await instance('a', [k1, k2]);
  expect((await rekey(a)).retired).toEqual([]);
  // B goes on sealing with k1, which the store still knows it needs.
  expect((await b.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('rekey-fleet-b') })).statusCode).toBe(201);
  await b.close();
  expect((await rekey(a)).retired).toEqual(['k1']);
  await a.close();
});

it('keeps the keys a stopped instance’s queued writes need until it has replayed them', async () => {
  const c = await instance('c', [k2]);
  // C is cut off from the store: a write is queued, sealed with k2, and C stops (or dies) with it still queued.
  expect((await c.inject({ method: 'POST', url: '/v1/admin/faults', headers: auth('admin'), payload: { store: 'unavailable' } })).statusCode).toBe(200);
  expect((await c.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('queued-on-c') })).statusCode).toBe(202);
  await c.close();
  const d = await instance('d', [k2, `k3:${randomBytes(32).toString('base64')}`]);
  const first = await rekey(d);
  expect(first.retired).not.toContain('k2');
  await d.close();
});
