/**
 * Admin routes: the write queue's dead letters, and, only when the service
 * was started with `--enable-fault-injection`, the store faults an operator
 * sets to rehearse an outage (DESIGN §5).
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ServiceContext } from '../../service/context.js';
import { listDeadLetters } from '../../service/dead-letters.js';
import type { FaultInjectingStore } from '../../store/faults.js';
import { actorOf, scoped } from '../request-context.js';
import { pageQuery } from '../schemas.js';

const tags = ['admin'];
const admin = { roles: ['admin'] as const };

export const faultsBody = z.strictObject({
  store: z.enum(['ok', 'unavailable', 'slow']),
  latencyMs: z.number().int().min(0).max(60_000).optional(),
  /** The share of write transactions that fail at commit with a conflict, as on a contended FoundationDB cluster. */
  conflictRate: z.number().min(0).max(1).optional(),
});

export async function adminRoutes(base: FastifyInstance, { ctx, faults, onFaultsCleared }: { ctx: ServiceContext; faults: FaultInjectingStore | undefined; onFaultsCleared: () => void }): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/v1/admin/dead-letters',
    { schema: { tags, summary: 'Queued writes that could no longer apply when replayed (admin)', querystring: pageQuery }, config: admin },
    async (request) => listDeadLetters(scoped(ctx, request), actorOf(request), request.query.limit, request.query.cursor),
  );

  if (faults === undefined) return;
  app.get('/v1/admin/faults', { schema: { tags, summary: 'The store faults in force (fault injection only)' }, config: admin }, async () => faults.faults);
  app.post(
    '/v1/admin/faults',
    { schema: { tags, summary: 'Set store faults: ok, unavailable, or slow by latencyMs (fault injection only)', body: faultsBody }, config: admin },
    async (request) => {
      const { store, latencyMs, conflictRate } = request.body;
      faults.setFaults({ store, latencyMs: latencyMs ?? (store === 'slow' ? 100 : 0), ...(conflictRate !== undefined ? { conflictRate } : {}) });
      request.log.warn({ store, latencyMs, conflictRate }, 'store faults set by an operator');
      if (store !== 'unavailable') onFaultsCleared();
      return faults.faults;
    },
  );
}
