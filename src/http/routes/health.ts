/**
 * `/healthz` (the process answers) and `/readyz` (the store answers; with the
 * write queue's state, so an operator sees writes waiting for the store).
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { WriteQueue } from '../../queue/write-queue.js';
import type { Store } from '../../store/store.js';

export async function healthRoutes(app: FastifyInstance, { store, queue, now }: { store: Store; queue: WriteQueue | undefined; now: () => Date }): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const oldest = queue?.oldest;
    const queued = queue
      ? { depth: queue.depth, bytes: queue.bytes, oldestAgeSeconds: oldest === undefined ? 0 : Math.max(0, (now().getTime() - Date.parse(oldest)) / 1000) }
      : { enabled: false };
    try {
      await store.ping();
      return { status: 'ready', store: { name: store.name, status: 'ok' }, queue: queued };
    } catch {
      return reply.code(503).send({ status: 'unavailable', store: { name: store.name, status: 'unavailable' }, queue: queued });
    }
  });
}
