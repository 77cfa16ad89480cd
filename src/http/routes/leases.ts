/**
 * Leases (DESIGN §3 "Leases and fencing"): one holder per task; renew before
 * it expires; release when done. The epoch is the fencing token every write
 * to a leased task carries as `Baton-Lease-Epoch`.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { newId } from '../../domain/ids.js';
import type { Lease } from '../../domain/leases.js';
import type { ServiceContext } from '../../service/context.js';
import { execute } from '../../service/execute.js';
import { markReplay, scoped, writeCommand } from '../request-context.js';
import { leaseParams, taskParams } from '../schemas.js';
import { leaseBody, renewBody } from '../../domain/requests.js';

const tags = ['leases'];

/** A lease as the API shows it: its id as `leaseId`. */
export function leaseView(lease: Lease): Omit<Lease, 'id'> & { leaseId: string } {
  const { id, ...rest } = lease;
  return { leaseId: id, ...rest };
}

export async function leaseRoutes(base: FastifyInstance, { ctx: shared }: { ctx: ServiceContext }): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/v1/tasks/:taskId/lease',
    { schema: { tags, summary: 'Acquire the task lease; 409 lease_held while another agent holds a live one', params: taskParams, body: leaseBody } },
    async (request, reply) => {
      const ctx = scoped(shared, request);
      const { lease, replayed } = await execute(ctx, { ...writeCommand(ctx, request), kind: 'lease.acquire', taskId: request.params.taskId, leaseId: newId(), ...request.body });
      markReplay(reply, replayed);
      return reply.code(201).header('Location', `/v1/leases/${lease.id}`).send(leaseView(lease));
    },
  );

  app.post('/v1/leases/:id/renew', { schema: { tags, summary: 'Renew a live lease', params: leaseParams, body: renewBody } }, async (request, reply) => {
    const ctx = scoped(shared, request);
    const { ttlMs } = request.body;
    const { lease, replayed } = await execute(ctx, { ...writeCommand(ctx, request), kind: 'lease.renew', leaseId: request.params.id, ...(ttlMs ? { ttlMs } : {}) });
    markReplay(reply, replayed);
    return leaseView(lease);
  });

  app.post('/v1/leases/:id/release', { schema: { tags, summary: 'Release a lease', params: leaseParams } }, async (request, reply) => {
    const ctx = scoped(shared, request);
    const { lease, replayed } = await execute(ctx, { ...writeCommand(ctx, request), kind: 'lease.release', leaseId: request.params.id });
    markReplay(reply, replayed);
    return leaseView(lease);
  });
}
