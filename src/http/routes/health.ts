/**
 * `/livez` (the process runs), `/healthz` (the same, kept for what already
 * checks it) and `/readyz` (whether this instance should be sent requests:
 * the store answers, or the store is down but the write queue still takes
 * writes; with the queue's state, so an operator sees writes waiting for
 * the store). `docs/write-queue.md` says what a load balancer does with each.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { WriteQueue } from '../../queue/write-queue.js';
import type { Store } from '../../store/store.js';

export async function healthRoutes(app: FastifyInstance, { store, queue, now }: { store: Store; queue: WriteQueue | undefined; now: () => Date }): Promise<void> {
  // Says only that the process runs: a store outage must never get a live instance, and the writes its queue holds, restarted.
  app.get('/livez', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const oldest = queue?.oldest;
    const queued = queue
      ? { depth: queue.depth, bytes: queue.bytes, oldestAgeSeconds: oldest === undefined ? 0 : Math.max(0, (now().getTime() - Date.parse(oldest)) / 1000), accepting: queue.accepting }
      : { enabled: false };
    try {
      await store.ping();
      return { status: 'ready', store: { name: store.name, status: 'ok' }, queue: queued };
    } catch {
      const unavailable = { name: store.name, status: 'unavailable' };
      // Writes sent here while the store is down are queued and answered 202: the instance stays in rotation while its queue takes them.
      if (queue?.accepting) return { status: 'degraded', store: unavailable, queue: queued };
      return reply.code(503).send({ status: 'unavailable', store: unavailable, queue: queued });
    }
  });
}
