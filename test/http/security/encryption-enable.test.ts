/**
 * Turning encryption at rest on for a store written without it: the plain
 * values still read (and only the new writes are sealed), `rekey` seals the
 * old ones and blinds their index keys, so search finds old and new alike;
 * and a service started on the sealed store without a key file refuses,
 * naming the key. Without encryption, rekey is 409 with a sentence.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { expect, it } from 'vitest';
import { useKeyedApp } from '../../support/keyed-app.js';
import { auth, checkpointBody } from '../../support/app.js';
import { mergePending } from '../../support/insert.js';

const keyed = useKeyedApp('baton-enable-');
const { keyFile } = keyed;
const create = (app: FastifyInstance, taskId: string, word: string) =>
  app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, { executionState: { phase: 'implementing', completedItems: [`wrote the ${word}`] } }) });
const search = async (app: FastifyInstance, q: string) =>
  ((await app.inject({ method: 'GET', url: `/v1/checkpoints?q=${q}`, headers: auth() })).json().items as { taskId: string }[]).map((c) => c.taskId).sort();

it('seals a plain store’s values and blinds its index on rekey, keeping everything readable and found', { timeout: 60_000 }, async () => {
  let app = await keyed.start({ withKeys: false });
  expect((await app.inject({ method: 'POST', url: '/v1/admin/rekey', headers: auth('admin'), payload: {} })).json()).toMatchObject({ status: 409, code: 'encryption_not_configured' });
  const old = (await create(app, 'plain-task', 'gazetteer')).json();
  // Merged into the runs before encryption is turned on, as a running indexer soon does: plain index keys.
  await mergePending(keyed.store(), 'default');
  await keyed.stop();

  writeFileSync(keyFile, `k1:${randomBytes(32).toString('base64')}\n`);
  app = await keyed.start();
  expect((await app.inject({ method: 'GET', url: `/v1/checkpoints/${old.id}`, headers: auth() })).statusCode).toBe(200);
  expect((await create(app, 'sealed-task', 'gazetteer')).statusCode).toBe(201);
  // Before the pass, the old checkpoint's index keys are plain: only the new one is found.
  expect(await search(app, 'gazetteer')).toEqual(['sealed-task']);
  expect((await app.inject({ method: 'POST', url: '/v1/admin/rekey', headers: auth('admin'), payload: {} })).statusCode).toBe(202);
  let status: { state: string; reindexed: number; resealed: number } = { state: 'running', reindexed: 0, resealed: 0 };
  while (status.state === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 20));
    status = (await app.inject({ method: 'GET', url: '/v1/admin/rekey', headers: auth('admin') })).json();
  }
  expect(status).toMatchObject({ state: 'done', reindexed: 1 });
  expect(status.resealed).toBeGreaterThan(3);
  expect(await search(app, 'gazetteer')).toEqual(['plain-task', 'sealed-task']);
  expect((await app.inject({ method: 'GET', url: `/v1/tasks/plain-task/audit/verify`, headers: auth('admin') })).json()).toMatchObject({ ok: true });
  await keyed.stop();

  await expect(keyed.start({ withKeys: false })).rejects.toThrow(/sealed with encryption key "k1"; set BATON_ENCRYPTION_KEY_FILE/);
});
