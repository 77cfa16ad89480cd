/**
 * A start refused for a missing encryption key leaves the store as it found
 * it: a store sealed with `k2`, started with a key file of `k9` alone, is
 * refused naming `k2`; every stored row is then byte for byte what it was,
 * and a start with the right key file is not refused over `k9`, which
 * nothing was ever sealed with.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { LmdbStore } from '../../../src/store/lmdb.js';
import { useKeyedApp } from '../../support/keyed-app.js';
import { auth, checkpointBody } from '../../support/app.js';

const keyed = useKeyedApp('baton-refused-');
const { dataDir, keyFile } = keyed;
async function stop(): Promise<void> {
  await keyed.stop();
}

/** Every row of the store, keys and values as hex: what a refused start must not change. */
async function everyRow(): Promise<string[]> {
  const store = LmdbStore.open({ path: dataDir });
  try {
    const rows = await store.transact(async (tx) => tx.getRange(Buffer.alloc(0), Buffer.from([0xff])), { readOnly: true });
    return rows.map((row) => `${Buffer.from(row.key).toString('hex')}=${Buffer.from(row.value).toString('hex')}`);
  } finally {
    await store.close();
  }
}

it('leaves the store unchanged when a key file lacks a used key, so the right key file starts again', { timeout: 60_000 }, async () => {
  const k2 = `k2:${randomBytes(32).toString('base64')}\n`;
  writeFileSync(keyFile, k2);
  const app = await keyed.start();
  const made = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('sealed-task') });
  expect(made.statusCode).toBe(201);
  await stop();
  const before = await everyRow();

  writeFileSync(keyFile, `k9:${randomBytes(32).toString('base64')}\n`);
  await expect(keyed.start()).rejects.toThrow(/sealed with encryption key "k2", which .* does not have/);
  expect(await everyRow()).toEqual(before);

  writeFileSync(keyFile, k2);
  const again = await keyed.start();
  expect((await again.inject({ method: 'GET', url: `/v1/checkpoints/${made.json().id as string}`, headers: auth() })).statusCode).toBe(200);
});
