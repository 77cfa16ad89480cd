/**
 * A queued write keeps what its 202 promised across instances (DESIGN §10):
 * instance A, cut off from the store, queues a create; instance B, over the
 * same store, writes the same task directly afterwards; when A's queue
 * replays, the queued checkpoint is stored with the id, hash and createdAt
 * its 202 announced, and the task's latest stays B's later write (latest by
 * acceptance). The history lists both in the order they were accepted, the
 * audit chain verifies, and full-text search finds the queued one.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import type { FastifyInstance } from 'fastify';
import { auth, checkpointBody, queueDrained, useTestApp } from '../../support/app.js';

const app = useTestApp({ config: { queueReplayMs: 20 }, app: { faultInjection: true } });
let other: FastifyInstance | undefined;
afterEach(async () => {
  await other?.close();
  other = undefined;
});

it('stores a queued create with the hash and time its 202 promised, and keeps the later direct write as the latest', async () => {
  const t = app();
  const a = t.app;
  // Instance B: its own runtime and queue directory over the same store.
  const b = (other = await buildApp({ config: { ...t.config, queueDir: join(t.dir, 'queue-b') }, store: t.store, eventPollMs: 100 }));
  await b.ready();
  const taskId = 'accepted-order';
  const first = await b.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId) });
  expect(first.statusCode).toBe(201);

  expect((await a.inject({ method: 'POST', url: '/v1/admin/faults', headers: auth('admin'), payload: { store: 'unavailable' } })).statusCode).toBe(200);
  const queuedRes = await a.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, { contextSummary: { keyDecisions: ['queuedonlyword decided while cut off'] } }) });
  expect(queuedRes.statusCode, queuedRes.body).toBe(202);
  const promised = (queuedRes.json() as { checkpoint: { id: string; createdAt: string; compliance: { hash: string } } }).checkpoint;

  await new Promise((resolve) => setTimeout(resolve, 5));
  const later = await b.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId) });
  expect(later.statusCode).toBe(201);
  const laterId = (later.json() as { id: string }).id;

  expect((await a.inject({ method: 'POST', url: '/v1/admin/faults', headers: auth('admin'), payload: { store: 'ok' } })).statusCode).toBe(200);
  await queueDrained(a);

  const stored = await b.inject({ method: 'GET', url: `/v1/checkpoints/${promised.id}`, headers: auth() });
  expect(stored.statusCode).toBe(200);
  expect(stored.json()).toMatchObject({ id: promised.id, createdAt: promised.createdAt, compliance: { hash: promised.compliance.hash } });
  const latest = await b.inject({ method: 'GET', url: `/v1/tasks/${taskId}/checkpoints/latest`, headers: auth() });
  expect((latest.json() as { id: string }).id).toBe(laterId);
  const history = (await b.inject({ method: 'GET', url: `/v1/tasks/${taskId}/checkpoints`, headers: auth() })).json() as { items: { id: string }[] };
  expect(history.items.map((c) => c.id)).toEqual([laterId, promised.id, (first.json() as { id: string }).id]);
  expect((await b.inject({ method: 'GET', url: `/v1/tasks/${taskId}/audit/verify`, headers: auth('auditor') })).json()).toMatchObject({ ok: true, entries: 3 });
  const found = (await b.inject({ method: 'GET', url: `/v1/checkpoints?q=queuedonlyword`, headers: auth('auditor') })).json() as { items: { id: string }[] };
  expect(found.items.map((c) => c.id)).toEqual([promised.id]);
  // A's own reads agree once its queue is empty.
  expect(((await a.inject({ method: 'GET', url: `/v1/tasks/${taskId}/checkpoints/latest`, headers: auth() })).json() as { id: string }).id).toBe(laterId);
});
