/**
 * Every stored value of every sealed space is sealed, read from the LMDB
 * file itself: each value of each space the codec table seals (checkpoint
 * records and their revisions, task heads, audit entries, events, handoffs,
 * recoveries, leases, idempotency records, the tenant's meta values) names
 * the expected key and opens with it under its key as associated data,
 * decoding to what was written. A raw-file search for words cannot tell
 * this: compressed records hide their words whether sealed or not. After a
 * rotation and `rekey` every value names the new key, and once the old key
 * has left the key file the earlier versions (revisions) still read.
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { expect, it } from 'vitest';
import { Keyring, sealedKeyId } from '../../../src/crypto/keyring.js';
import { codecsFor, decodePlain, SEALED_SPACES } from '../../../src/service/repository/codec.js';
import { TASK_TAGS, tenantKeyspace, type SpaceName } from '../../../src/store/keyspace.js';
import { LmdbStore } from '../../../src/store/lmdb.js';
import { useKeyedApp } from '../../support/keyed-app.js';
import { auth, checkpointBody } from '../../support/app.js';

const keyed = useKeyedApp('baton-sealed-values-');
const { dir, dataDir, keyFile } = keyed;
async function stop(): Promise<void> {
  await keyed.stop();
}

/** The spaces whose values are records split over numbered chunks (`writeRecord`): their associated data is the key without the chunk. */
const RECORD_SPACES: ReadonlySet<SpaceName> = new Set(['checkpoints', 'revisions', 'tasks', 'handoffs', 'recoveries', 'leases', 'deadLetters']);

/**
 * Opens every value of every sealed space of the default tenant with the
 * key file's keys, through the service's own codecs; answers the values
 * found per space, and every key id they name.
 */
async function everySealedValue(keys: string): Promise<{ counts: Record<string, number>; keyIds: Set<string> }> {
  writeFileSync(join(dir, 'opening-keys'), keys);
  const keyring = Keyring.fromFile(join(dir, 'opening-keys'));
  const codecs = codecsFor({ seal: () => Buffer.alloc(0), open: (bytes, aad) => keyring.open(bytes, aad), blind: () => '' });
  const ks = tenantKeyspace('default');
  const store = LmdbStore.open({ path: dataDir });
  const counts: Record<string, number> = {};
  const keyIds = new Set<string>();
  try {
    for (const name of SEALED_SPACES) {
      const space = ks[name];
      // A task's own spaces share one range in the `task` layout: each takes the rows of its tag.
      const local = name in TASK_TAGS && ks.layout === 'task';
      const range = local ? ks.taskLocal.range() : space.range();
      const rows = (await store.transact(async (tx) => tx.getRange(range.begin, range.end), { readOnly: true })).filter((row) => !local || space.contains(row.key));
      counts[name] = 0;
      for (const row of rows) {
        // The store's format marker is read before any key is known: the one plain value of a sealed space.
        if (name === 'meta' && Buffer.compare(row.key, ks.meta.pack('format')) === 0) continue;
        const parts = space.unpack(row.key);
        const records = RECORD_SPACES.has(name);
        // A split record is opened whole from its chunks; its first chunk stands for it.
        if (records && (parts[parts.length - 1] as number) > 1) continue;
        const aad = name === 'events' ? space.prefix : records ? space.pack(...parts.slice(0, -1)) : row.key;
        const whole = records && parts[parts.length - 1] === 1 ? Buffer.concat(rows.filter((r) => r.key.subarray(0, aad.length).equals(aad)).map((r) => r.value)) : row.value;
        const keyId = sealedKeyId(whole);
        expect(keyId, `a value of ${name} is not sealed`).toBeDefined();
        keyIds.add(keyId!);
        const value = codecs[name].decode(whole, aad);
        expect(value, `a value of ${name} decodes to nothing`).toBeDefined();
        if (name === 'checkpoints' || name === 'revisions') {
          const record = value as { c: string; h: string };
          expect(createHash('sha256').update(record.c).digest('hex')).toBe(record.h);
          expect(decodePlain(keyring.open(whole, aad))).toEqual(record);
        }
        counts[name] += 1;
      }
    }
  } finally {
    await store.close();
  }
  return { counts, keyIds };
}

async function rekey(app: FastifyInstance): Promise<Record<string, unknown>> {
  expect((await app.inject({ method: 'POST', url: '/v1/admin/rekey', headers: auth('admin'), payload: {} })).statusCode).toBe(202);
  let status: Record<string, unknown> = { state: 'running' };
  while (status.state === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 20));
    status = (await app.inject({ method: 'GET', url: '/v1/admin/rekey', headers: auth('admin') })).json();
  }
  return status;
}

const k1 = `k1:${randomBytes(32).toString('base64')}`;
const k2 = `k2:${randomBytes(32).toString('base64')}`;

it('seals every stored value of every sealed space, revisions included, and reads revisions after the old key is retired', { timeout: 120_000 }, async () => {
  writeFileSync(keyFile, `${k1}\n`);
  const app = await keyed.start();
  const inject = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, headers: Record<string, string> = {}) =>
    app.inject({ method, url, headers: { ...auth(), ...headers }, ...(payload ? { payload } : {}) });
  const made = await inject('POST', '/v1/checkpoints', checkpointBody('sealed-task', { executionState: { phase: 'implementing', completedItems: ['first version'] } }), { 'idempotency-key': 'create-once' });
  expect(made.statusCode).toBe(201);
  const id = made.json().id as string;
  for (const [n, word] of [[1, 'second'], [2, 'third']] as const) {
    const patched = await inject('PATCH', `/v1/checkpoints/${id}`, { executionState: { completedItems: [`${word} version`] } }, { 'content-type': 'application/merge-patch+json', 'if-match': `"${n}"` });
    expect(patched.statusCode).toBe(200);
  }
  const handoff = await inject('POST', `/v1/checkpoints/${id}/handoff`, { trigger: 'explicit' });
  expect(handoff.statusCode).toBe(201);
  expect((await inject('POST', `/v1/handoffs/${handoff.json().handoff.id as string}/ack`, { agentId: 'next-agent' })).statusCode).toBe(200);
  expect((await inject('POST', '/v1/checkpoints', checkpointBody('recovered-task'))).statusCode).toBe(201);
  expect((await inject('POST', '/v1/tasks/recovered-task/recoveries', { reason: 'crashed', failure: { kind: 'crash' } })).statusCode).toBe(201);
  await stop();

  const sealed = await everySealedValue(`${k1}\n`);
  expect(sealed.keyIds).toEqual(new Set(['k1']));
  for (const name of ['checkpoints', 'revisions', 'tasks', 'audit', 'events', 'handoffs', 'recoveries', 'leases', 'idempotency', 'meta']) {
    expect(sealed.counts[name], `no value of ${name} was looked at`).toBeGreaterThan(0);
  }
  expect(sealed.counts.revisions).toBeGreaterThanOrEqual(2);

  // Rotation: k2 is added, rekey re-seals every value with it and retires k1.
  writeFileSync(keyFile, `${k1}\n${k2}\n`);
  expect(await rekey(await keyed.start())).toMatchObject({ state: 'done', retired: ['k1'] });
  await stop();
  const resealed = await everySealedValue(`${k2}\n`);
  expect(resealed.keyIds).toEqual(new Set(['k2']));
  expect(resealed.counts.revisions).toBe(sealed.counts.revisions);

  // k1 has left the key file: every earlier version still reads, and verifies.
  writeFileSync(keyFile, `${k2}\n`);
  const after = await keyed.start();
  const revisions = await after.inject({ method: 'GET', url: `/v1/checkpoints/${id}/revisions`, headers: auth() });
  expect(revisions.statusCode).toBe(200);
  const items = revisions.json().items as { version: number; verified: boolean }[];
  expect(items.map((item) => item.version)).toEqual([1, 2, 3, 4]);
  expect(items.every((item) => item.verified)).toBe(true);
  for (const [version, word] of [[1, 'first'], [2, 'second'], [3, 'third']] as const) {
    const read = await after.inject({ method: 'GET', url: `/v1/checkpoints/${id}?version=${version}`, headers: auth() });
    expect(read.statusCode).toBe(200);
    expect(read.body).toContain(`${word} version`);
  }
});
