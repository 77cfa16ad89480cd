/**
 * Recovery (DESIGN §3): the recovery point, starting a recovery (or being
 * blocked by the circuit breaker), completing it, and an admin's unblock.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { newId } from '../../domain/ids.js';
import type { ServiceContext } from '../../service/context.js';
import { execute } from '../../service/execute.js';
import { readRecovery } from '../../service/recovery.js';
import { recoveryPoint } from '../../service/recovery-point.js';
import { taskInfo } from '../../service/tasks.js';
import { actorOf, markReplay, scoped, sendWithDocs, writeCommand } from '../request-context.js';
import { idParams, taskParams } from '../schemas.js';
import { recoveryBody, successorBody, unblockBody } from '../../domain/requests.js';
import { leaseView } from './leases.js';

const tags = ['recovery'];

export async function recoveryRoutes(base: FastifyInstance, { ctx: shared }: { ctx: ServiceContext }): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/v1/tasks/:taskId/recovery-point',
    { schema: { tags, summary: 'The newest checkpoint that verifies, walking back past corrupt ones', params: taskParams } },
    async (request, reply) => {
      const { taskId } = request.params;
      const { checkpoint, skipped } = await recoveryPoint(scoped(shared, request), actorOf(request), taskId);
      return sendWithDocs(reply, 200, { taskId, skipped }, { checkpoint });
    },
  );

  app.post(
    '/v1/tasks/:taskId/recoveries',
    { schema: { tags, summary: 'Start a recovery; blocked by the circuit breaker after repeated failures', params: taskParams, body: recoveryBody } },
    async (request, reply) => {
      const ctx = scoped(shared, request);
      const started = await execute(ctx, { ...writeCommand(ctx, request), kind: 'recovery.start', taskId: request.params.taskId, recoveryId: newId(), ...request.body });
      markReplay(reply, started.replayed);
      reply.header('Location', `/v1/recoveries/${started.recovery.id}`);
      return sendWithDocs(reply, 201, { recovery: started.recovery, continuationPrompt: started.continuationPrompt }, { checkpoint: started.checkpoint });
    },
  );

  app.get('/v1/recoveries/:id', { schema: { tags, summary: 'A recovery: initiated, blocked or completed', params: idParams } }, async (request) =>
    readRecovery(scoped(shared, request), actorOf(request), request.params.id),
  );

  app.post(
    '/v1/recoveries/:id/complete',
    { schema: { tags, summary: 'Complete a recovery: the recovering agent gets the task lease', params: idParams, body: successorBody } },
    async (request, reply) => {
      const ctx = scoped(shared, request);
      const completed = await execute(ctx, { ...writeCommand(ctx, request), kind: 'recovery.complete', recoveryId: request.params.id, leaseId: newId(), ...request.body });
      markReplay(reply, completed.replayed);
      return { recovery: completed.recovery, lease: leaseView(completed.lease) };
    },
  );

  app.post(
    '/v1/tasks/:taskId/unblock',
    { schema: { tags, summary: 'Unblock a task the circuit breaker blocked (admin)', params: taskParams, body: unblockBody }, config: { roles: ['admin'] } },
    async (request) => {
      const ctx = scoped(shared, request);
      const { reason } = request.body;
      await execute(ctx, { ...writeCommand(ctx, request), kind: 'task.unblock', taskId: request.params.taskId, ...(reason ? { reason } : {}) });
      return taskInfo(ctx, actorOf(request), request.params.taskId);
    },
  );
}
