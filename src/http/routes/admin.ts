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
import { changeFleetSettings, currentSettings } from '../../service/fleet/settings.js';
import { fleetSettingsBody } from '../../domain/fleet-settings.js';
import { rekeyStatus, startRekey } from '../../service/vault.js';
import type { FaultInjectingStore } from '../../store/faults.js';
import type { StoreErrorCode } from '../../store/store.js';
import { actorOf, scoped } from '../request-context.js';
import { pageQuery } from '../schemas.js';

const tags = ['admin'];
const admin = { roles: ['admin'] as const };

const STORE_ERROR_CODES = ['conflict', 'commit_unknown', 'timeout', 'unavailable', 'too_large', 'not_configured', 'internal'] as const satisfies readonly StoreErrorCode[];

export const faultsBody = z.strictObject({
  store: z.enum(['ok', 'unavailable', 'slow', 'error']),
  latencyMs: z.number().int().min(0).max(60_000).optional(),
  /** With `error`: the store error code transactions fail with. */
  code: z.enum(STORE_ERROR_CODES).optional(),
  /** With `error`: how many transactions fail before the store is ok again. */
  times: z.number().int().min(1).max(1_000_000).optional(),
  /** With `error`: each failing transaction commits first and its answer is lost. */
  afterCommit: z.boolean().optional(),
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

  app.post('/v1/admin/rekey', { schema: { tags, summary: 'Re-seal every stored value with the newest encryption key, in the background (admin)' }, config: admin }, async (request, reply) => {
    // A pass already running, here or on another instance, is answered as it stands: nothing more starts.
    const status = await startRekey(ctx);
    request.log.info({ state: status.state, instanceId: status.instanceId }, 'rekey pass asked for');
    return reply.code(202).send(status);
  });
  app.get('/v1/admin/settings', { schema: { tags, summary: 'The settings that remove data, shared by every instance over the store (admin)' }, config: admin }, async () => currentSettings(ctx));
  app.put(
    '/v1/admin/settings',
    { schema: { tags, summary: 'Change the settings that remove data for every instance: default retention, expireAfter and keepLast; event and operation retention (admin)', body: fleetSettingsBody }, config: admin },
    async (request) => {
      const settings = await changeFleetSettings(ctx, request.body);
      request.log.warn({ settings }, 'fleet settings changed by an operator');
      return settings;
    },
  );
  app.get('/v1/admin/rekey', { schema: { tags, summary: 'Where the re-seal pass stands (admin)' }, config: admin }, async () => rekeyStatus(ctx));

  if (faults === undefined) return;
  app.get('/v1/admin/faults', { schema: { tags, summary: 'The store faults in force, and the failures injected so far by code (fault injection only)' }, config: admin }, async () => ({
    ...faults.faults,
    injected: faults.injectedFailures,
  }));
  app.post(
    '/v1/admin/faults',
    { schema: { tags, summary: 'Set store faults: ok, unavailable, slow by latencyMs, or error with a store error code (fault injection only)', body: faultsBody }, config: admin },
    async (request) => {
      const { store, latencyMs, code, times, afterCommit, conflictRate } = request.body;
      faults.setFaults({
        store,
        latencyMs: latencyMs ?? (store === 'slow' ? 100 : 0),
        ...(store === 'error' ? { code: code ?? 'internal', ...(times !== undefined ? { times } : {}), ...(afterCommit !== undefined ? { afterCommit } : {}) } : {}),
        ...(conflictRate !== undefined ? { conflictRate } : {}),
      });
      request.log.warn({ store, latencyMs, code, times, afterCommit, conflictRate }, 'store faults set by an operator');
      if (store !== 'unavailable') onFaultsCleared();
      return faults.faults;
    },
  );
}
