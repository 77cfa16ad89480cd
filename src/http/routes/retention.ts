/**
 * A task's retention policy, its legal hold, and compaction (DESIGN §3;
 * `docs/retention.md`): admins change them, every reader may look.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { compactBody, holdBody, policyBody } from '../../domain/retention.js';
import { AppError } from '../../errors.js';
import type { ServiceContext } from '../../service/context.js';
import { execute } from '../../service/execute.js';
import { compactionDryRun, compactionGuards, readPolicy } from '../../service/retention.js';
import { actorOf, scoped, writeCommand } from '../request-context.js';
import { taskParams } from '../schemas.js';

const tags = ['retention'];
const admin = { roles: ['admin'] as const };

export async function retentionRoutes(base: FastifyInstance, { ctx: shared }: { ctx: ServiceContext }): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get('/v1/tasks/:taskId/policy', { schema: { tags, summary: 'The task’s retention policy (its own, and in effect with the tenant defaults) and legal hold', params: taskParams } }, async (request) =>
    readPolicy(scoped(shared, request), actorOf(request), request.params.taskId),
  );

  app.put(
    '/v1/tasks/:taskId/policy',
    { schema: { tags, summary: 'Set the task’s retention, expireAfter and keepLast (admin; null clears a member); audited', params: taskParams, body: policyBody }, config: admin },
    async (request) => {
      const ctx = scoped(shared, request);
      return execute(ctx, { ...writeCommand(ctx, request), kind: 'task.policy', taskId: request.params.taskId, ...request.body });
    },
  );

  app.put(
    '/v1/tasks/:taskId/legal-hold',
    { schema: { tags, summary: 'Place a legal hold (admin): nothing of the task is purged, compacted or expired until it is lifted; audited', params: taskParams, body: holdBody }, config: admin },
    async (request) => {
      const ctx = scoped(shared, request);
      return execute(ctx, { ...writeCommand(ctx, request), kind: 'task.hold', taskId: request.params.taskId, hold: true, reason: request.body.reason });
    },
  );

  app.delete(
    '/v1/tasks/:taskId/legal-hold',
    {
      schema: { tags, summary: 'Lift the legal hold (admin); audited', params: taskParams, body: z.strictObject({ reason: z.string().min(1).max(2_000).optional() }).nullish() },
      config: admin,
    },
    async (request) => {
      const ctx = scoped(shared, request);
      const reason = request.body?.reason;
      return execute(ctx, { ...writeCommand(ctx, request), kind: 'task.hold', taskId: request.params.taskId, hold: false, ...(reason ? { reason } : {}) });
    },
  );

  app.post(
    '/v1/tasks/:taskId/compact',
    {
      schema: {
        tags,
        summary: 'Remove old checkpoints beyond keepLast (admin): never the latest, the recovery point, an open handoff’s, the lease holder’s newest, or anything retained or held',
        params: taskParams,
        body: compactBody.default({}),
      },
      config: admin,
    },
    async (request) => {
      const ctx = scoped(shared, request);
      const actor = actorOf(request);
      const { taskId } = request.params;
      const keepLast = request.body.keepLast ?? (await readPolicy(ctx, actor, taskId)).effective.keepLast;
      if (keepLast === undefined) {
        throw new AppError('validation_failed', { errors: [{ field: 'keepLast', message: 'is required when the task’s policy sets no keepLast' }] });
      }
      const protect = await compactionGuards(ctx, actor, taskId);
      if (request.body.dryRun === true) return { ...(await compactionDryRun(ctx, actor, taskId, keepLast, protect)), dryRun: true };
      return { ...(await execute(ctx, { ...writeCommand(ctx, request), kind: 'task.compact', taskId, keepLast, protect })), dryRun: false };
    },
  );
}
