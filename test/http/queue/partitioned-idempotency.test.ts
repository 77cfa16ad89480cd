/**
 * What cannot hold across instances during a partition, tested as
 * `docs/write-queue.md` states it: one Idempotency-Key sent to instance A,
 * cut off from the store (202, queued, a checkpoint id promised), and to
 * instance B, which reaches it (201). Neither instance can know of the
 * other's answer while A is cut off. Once A replays, the key has one effect:
 * B's checkpoint. A's queued write is recognised as its repeat and applies
 * nothing; the id A's 202 promised is never created (404), and the key
 * through any instance now answers B's checkpoint.
 *
 * What does hold: the key retried through the same cut-off instance (a
 * client that gave up before the 202) is answered the first 202, and the
 * checkpoint it promised is created once.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { auth, checkpointBody, queueDrained, useTestApp } from '../../support/app.js';

const app = useTestApp({ config: { queueReplayMs: 20 }, app: { faultInjection: true } });
let other: FastifyInstance | undefined;
afterEach(async () => {
  await other?.close();
  other = undefined;
});

it('gives one Idempotency-Key sent to a cut-off instance and to another one effect, the reachable instance’s', async () => {
  const t = app();
  const a = t.app;
  const b = (other = await buildApp({ config: { ...t.config, queueDir: join(t.dir, 'queue-b') }, store: t.store }));
  const headers = { ...auth(), 'idempotency-key': 'partitioned-key' };
  const body = checkpointBody('partitioned');
  expect((await a.inject({ method: 'POST', url: '/v1/admin/faults', headers: auth('admin'), payload: { store: 'unavailable' } })).statusCode).toBe(200);
  const queued = await a.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: body });
  expect(queued.statusCode).toBe(202);
  const promised = (queued.json() as { checkpointId: string }).checkpointId;
  const direct = await b.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: body });
  expect(direct.statusCode).toBe(201);
  const stored = (direct.json() as { id: string }).id;
  expect(stored).not.toBe(promised);

  expect((await a.inject({ method: 'POST', url: '/v1/admin/faults', headers: auth('admin'), payload: { store: 'ok' } })).statusCode).toBe(200);
  await queueDrained(a);
  const history = (await b.inject({ method: 'GET', url: '/v1/tasks/partitioned/checkpoints', headers: auth() })).json() as { items: { id: string }[] };
  expect(history.items.map((c) => c.id)).toEqual([stored]);
  expect((await a.inject({ method: 'GET', url: `/v1/checkpoints/${promised}`, headers: auth() })).statusCode).toBe(404);
  const again = await a.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: body });
  expect(again.statusCode).toBe(201);
  expect((again.json() as { id: string }).id).toBe(stored);
  const dead = (await a.inject({ method: 'GET', url: '/v1/admin/dead-letters', headers: auth('admin') })).json() as { items: unknown[] };
  expect(dead.items).toEqual([]);
});

it('answers one Idempotency-Key retried through the same cut-off instance with its first 202, and creates that checkpoint once', async () => {
  const a = app().app;
  const headers = { ...auth(), 'idempotency-key': 'retried-key' };
  const body = checkpointBody('retried');
  expect((await a.inject({ method: 'POST', url: '/v1/admin/faults', headers: auth('admin'), payload: { store: 'unavailable' } })).statusCode).toBe(200);
  const first = await a.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: body });
  expect(first.statusCode).toBe(202);
  const again = await a.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: body });
  expect(again.statusCode).toBe(202);
  expect(again.json()).toEqual(first.json());
  const other = await a.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody('retried', { labels: { other: true } }) });
  expect(other.statusCode).toBe(422);
  expect((other.json() as { code: string }).code).toBe('idempotency_key_reused');

  expect((await a.inject({ method: 'POST', url: '/v1/admin/faults', headers: auth('admin'), payload: { store: 'ok' } })).statusCode).toBe(200);
  await queueDrained(a);
  const promised = (first.json() as { checkpointId: string }).checkpointId;
  const history = (await a.inject({ method: 'GET', url: '/v1/tasks/retried/checkpoints', headers: auth() })).json() as { items: { id: string }[] };
  expect(history.items.map((c) => c.id)).toEqual([promised]);
  const later = await a.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: body });
  expect(later.statusCode).toBe(201);
  expect((later.json() as { id: string }).id).toBe(promised);
  const dead = (await a.inject({ method: 'GET', url: '/v1/admin/dead-letters', headers: auth('admin') })).json() as { items: unknown[] };
  expect(dead.items).toEqual([]);
});
