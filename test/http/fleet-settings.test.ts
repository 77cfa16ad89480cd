/**
 * The settings that remove data live in the store (DESIGN §10): the first
 * instance's configuration seeds them; an instance started later with other
 * values uses the store's (so the one with the smallest keepLast or expiry
 * does not delete for all), and `PUT /v1/admin/settings` through any
 * instance changes them for every instance at once.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { auth, checkpointBody, useTestApp } from '../support/app.js';

const app = useTestApp({ config: { defaultKeepLast: 5, eventRetentionMs: 3_600_000 } });
let other: FastifyInstance | undefined;
afterEach(async () => {
  await other?.close();
  other = undefined;
});

it('uses the store’s settings over a later instance’s configuration, and a change through one instance holds for all', async () => {
  const t = app();
  const a = t.app;
  const b = (other = await buildApp({ config: { ...t.config, queueDir: join(t.dir, 'queue-b'), defaultKeepLast: 1, eventRetentionMs: 1_000 }, store: t.store }));
  expect((await b.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('shared-policy') })).statusCode).toBe(201);

  const effective = async (instance: FastifyInstance) => ((await instance.inject({ method: 'GET', url: '/v1/tasks/shared-policy/policy', headers: auth('admin') })).json() as { effective: { keepLast?: number } }).effective;
  expect(await effective(b)).toEqual({ keepLast: 5 });
  expect((await b.inject({ method: 'GET', url: '/v1/admin/settings', headers: auth('admin') })).json()).toEqual({ defaults: { keepLast: 5 }, eventRetentionMs: 3_600_000, operationRetentionMs: 86_400_000 });

  const changed = await b.inject({ method: 'PUT', url: '/v1/admin/settings', headers: auth('admin'), payload: { keepLast: 2, expireAfter: 'P30D' } });
  expect(changed.statusCode, changed.body).toBe(200);
  expect(await effective(a)).toEqual({ keepLast: 2, expireAfter: 'P30D' });
  expect((await a.inject({ method: 'GET', url: '/v1/admin/settings', headers: auth('admin') })).json()).toMatchObject({ defaults: { keepLast: 2, expireAfter: 'P30D' } });
  // Cleared with null; a bad value changes nothing and names the field.
  expect((await a.inject({ method: 'PUT', url: '/v1/admin/settings', headers: auth('admin'), payload: { expireAfter: null } })).json()).toMatchObject({ defaults: { keepLast: 2 } });
  const refused = await a.inject({ method: 'PUT', url: '/v1/admin/settings', headers: auth('admin'), payload: { keepLast: 0 } });
  expect(refused.statusCode).toBe(400);
  expect(refused.body).toContain('keepLast');
  expect((await a.inject({ method: 'PUT', url: '/v1/admin/settings', headers: auth(), payload: { keepLast: 3 } })).statusCode).toBe(403);
  expect(await effective(b)).toEqual({ keepLast: 2 });
});
