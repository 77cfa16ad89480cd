/**
 * `/livez` (the process runs), `/healthz` (the same, kept for what already
 * checks it) and `/readyz` (whether this instance should be sent requests:
 * the store answers, or the store is down but the write queue still takes
 * writes; with the queue's state, so an operator sees writes waiting for
 * the store). `docs/write-queue.md` says what a load balancer does with each.
 * A full disk (the data directory's, the queue's) adds `reason`, a sentence
 * naming the directory, and `disk`: reads still work, so a full data
 * directory leaves the instance `degraded`, not out of rotation.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { FullDisk } from '../../fs/free-space.js';
import type { WriteQueue } from '../../queue/write-queue.js';
import type { Store } from '../../store/store.js';

export async function healthRoutes(
  app: FastifyInstance,
  { store, queue, dataDisk, now }: { store: Store; queue: WriteQueue | undefined; dataDisk: FullDisk | undefined; now: () => Date },
): Promise<void> {
  // Says only that the process runs: a store outage must never get a live instance, and the writes its queue holds, restarted.
  app.get('/livez', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const oldest = queue?.oldest;
    const queued = queue
      ? { depth: queue.depth, bytes: queue.bytes, oldestAgeSeconds: oldest === undefined ? 0 : Math.max(0, (now().getTime() - Date.parse(oldest)) / 1000), accepting: queue.accepting }
      : { enabled: false };
    const full = fullDisks(dataDisk, queue);
    try {
      await store.ping();
      if (dataDisk?.full) return { status: 'degraded', store: { name: store.name, status: 'full' }, queue: queued, ...full };
      return { status: 'ready', store: { name: store.name, status: 'ok' }, queue: queued, ...full };
    } catch {
      const unavailable = { name: store.name, status: 'unavailable' };
      // Writes sent here while the store is down are queued and answered 202: the instance stays in rotation while its queue takes them.
      if (queue?.accepting) return { status: 'degraded', store: unavailable, queue: queued, ...full };
      return reply.code(503).send({ status: 'unavailable', store: unavailable, queue: queued, ...full });
    }
  });
}

/** The `reason` and `disk` fields of a readiness answer while a disk is full; none otherwise. */
function fullDisks(dataDisk: FullDisk | undefined, queue: WriteQueue | undefined): { reason?: string; disk?: Record<string, unknown> } {
  const data = dataDisk?.full === true ? dataDisk.describe() : undefined;
  const journal = queue?.disk.full === true ? queue.disk.describe() : undefined;
  if (data === undefined && journal === undefined) return {};
  const reasons = [
    ...(data ? [`The data directory ${data.directory} has no room: writes are refused (507) until space is freed there; reads still work.`] : []),
    ...(journal ? [`The write queue's directory ${journal.directory} has no room: writes cannot be queued while the store is down until space is freed there.`] : []),
  ];
  return { reason: reasons.join(' '), disk: { ...(data ? { data } : {}), ...(journal ? { queue: journal } : {}) } };
}
