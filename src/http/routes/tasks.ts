/**
 * /v1/tasks/:taskId: the task, its purge, the latest checkpoint, history,
 * and the audit trail with its verification and evidence export.
 *
 * @module
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError } from '../../errors.js';
import { auditEntries, auditPage, listTasks, taskExists, verifyAudit } from '../../service/audit.js';
import type { ServiceContext } from '../../service/context.js';
import { latestCheckpoint, taskHistory } from '../../service/checkpoint-reads.js';
import { evidenceBundle } from '../../service/evidence.js';
import { purgeWithin } from '../../service/maintenance/runner.js';
import { execute } from '../../service/execute.js';
import { taskInfo } from '../../service/tasks.js';
import { accepts, actorOf, scoped, sendDoc, sendDocs, writeCommand } from '../request-context.js';
import { pageQuery, taskParams } from '../schemas.js';
import { taskStateBody } from '../../domain/requests.js';

const NDJSON = 'application/x-ndjson';

export interface TaskRouteOptions {
  ctx: ServiceContext;
  /** Whether writers may purge tasks (`BATON_WRITER_PURGE=1`); admins always may. */
  writerPurge?: boolean;
  /** How long a purge request goes on before it answers 202 and leaves the rest to the maintenance runner (ms). */
  purgeWaitMs?: number;
}

export async function taskRoutes(base: FastifyInstance, { ctx, writerPurge = false, purgeWaitMs = 2_000 }: TaskRouteOptions): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get('/v1/tasks', { schema: { tags: ['tasks'], summary: 'The tenant’s task ids, in id order, paged', querystring: pageQuery } }, async (request) =>
    listTasks(scoped(ctx, request), actorOf(request), request.query.limit, request.query.cursor),
  );

  app.get(
    '/v1/tasks/:taskId',
    { schema: { tags: ['tasks'], summary: 'A task: state, lease holder and epoch, latest and recovery-point ids, open handoff', params: taskParams } },
    async (request) => taskInfo(scoped(ctx, request), actorOf(request), request.params.taskId),
  );

  app.get(
    '/v1/tasks/:taskId/evidence',
    {
      schema: { tags: ['audit'], summary: 'The task’s evidence bundle (POSIX tar): every checkpoint version, the audit trail, a signed manifest and SHA256SUMS, checkable offline', params: taskParams, produces: ['application/x-tar'] },
      config: { roles: ['auditor', 'admin'] },
    },
    async (request, reply) => {
      const { archive } = await evidenceBundle(scoped(ctx, request), actorOf(request), request.params.taskId);
      const name = `evidence-${request.params.taskId.replace(/[^A-Za-z0-9._-]/g, '_')}.tar`;
      return reply.type('application/x-tar').header('Content-Disposition', `attachment; filename="${name}"`).send(archive);
    },
  );

  app.put(
    '/v1/tasks/:taskId/state',
    { schema: { tags: ['tasks'], summary: 'Set a task state: working, input-required, auth-required, completed, failed, canceled', params: taskParams, body: taskStateBody } },
    async (request) => {
      const scopedCtx = scoped(ctx, request);
      const { state, reason } = request.body;
      return execute(scopedCtx, { ...writeCommand(scopedCtx, request), kind: 'task.state', taskId: request.params.taskId, state, ...(reason ? { reason } : {}) });
    },
  );

  app.delete(
    '/v1/tasks/:taskId',
    {
      schema: { tags: ['tasks'], summary: 'Purge a task’s checkpoints; 409 retention_active under retention or legal hold; the audit chain keeps a tombstone', params: taskParams },
      config: { roles: writerPurge ? ['admin', 'writer'] : ['admin'] },
    },
    async (request, reply) => {
      const scopedCtx = scoped(ctx, request);
      // Small tasks are purged before the answer (204); a large one answers 202 and the maintenance runner finishes it.
      const purged = await purgeWithin(scopedCtx, { ...writeCommand(scopedCtx, request), kind: 'task.purge', taskId: request.params.taskId }, purgeWaitMs);
      if (purged.done) return reply.code(204).send();
      return reply.code(202).send({ taskId: purged.taskId, purging: true, purged: purged.purged });
    },
  );

  app.get(
    '/v1/tasks/:taskId/checkpoints/latest',
    { schema: { tags: ['tasks'], summary: 'The newest checkpoint whose hash verifies', params: taskParams } },
    async (request, reply) => {
      const { checkpoint, skipped } = await latestCheckpoint(scoped(ctx, request), actorOf(request), request.params.taskId);
      // Corrupt checkpoints newer than this one were skipped; they are named here and reported as events.
      if (skipped.length > 0) reply.header('Baton-Skipped-Corrupt', skipped.join(','));
      return sendDoc(reply, checkpoint);
    },
  );

  app.get(
    '/v1/tasks/:taskId/checkpoints',
    { schema: { tags: ['tasks'], summary: 'A task’s checkpoints, newest first', params: taskParams, querystring: pageQuery } },
    async (request, reply) =>
      sendDocs(reply, await taskHistory(scoped(ctx, request), actorOf(request), request.params.taskId, request.query.limit, request.query.cursor)),
  );

  app.get(
    '/v1/tasks/:taskId/audit',
    {
      schema: { tags: ['audit'], summary: 'Audit entries; Accept: application/x-ndjson streams the whole trail', params: taskParams, querystring: pageQuery },
      config: { roles: ['auditor', 'admin', 'writer'] },
    },
    async (request, reply) => {
      const actor = actorOf(request);
      if (accepts(request, NDJSON)) {
        if (!(await taskExists(scoped(ctx, request), actor, request.params.taskId))) throw new AppError('not_found', { detail: 'No task with this id exists.' });
        const lines = async function* () {
          for await (const entry of auditEntries(scoped(ctx, request), actor, request.params.taskId)) yield `${JSON.stringify(entry)}\n`;
        };
        return reply
          .type(NDJSON)
          .header('Content-Disposition', `attachment; filename="audit-${encodeURIComponent(request.params.taskId)}.ndjson"`)
          .send(Readable.from(lines()));
      }
      return auditPage(scoped(ctx, request), actor, request.params.taskId, request.query.limit, request.query.cursor);
    },
  );

  app.get(
    '/v1/tasks/:taskId/audit/verify',
    { schema: { tags: ['audit'], summary: 'Recompute the audit chain; names the first broken entry', params: taskParams } },
    async (request) => verifyAudit(scoped(ctx, request), actorOf(request), request.params.taskId),
  );
}
