/**
 * Handoffs (DESIGN §3): an agent hands its task off
 * (`POST /v1/checkpoints/:id/handoff`), a fresh agent acknowledges
 * (`POST /v1/handoffs/:id/ack`) and gets the child checkpoint and the lease.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { newId } from '../../domain/ids.js';
import type { ServiceContext } from '../../service/context.js';
import { execute } from '../../service/execute.js';
import { handoffPrompt, readHandoff } from '../../service/handoff.js';
import { MAX_PROMPT_BUDGET } from '../../service/resume-prompt.js';
import { submit } from '../../service/submit.js';
import { actorOf, markReplay, scoped, sendQueued, sendWithDocs, traceparentOf, writeCommand } from '../request-context.js';
import { idParams } from '../schemas.js';
import { handoffBody, successorBody } from '../../domain/requests.js';
import { leaseView } from './leases.js';

const tags = ['handoffs'];

export async function handoffRoutes(base: FastifyInstance, { ctx: shared }: { ctx: ServiceContext }): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/v1/checkpoints/:id/handoff',
    {
      schema: {
        tags,
        summary: 'Hand the task off: finalize this checkpoint in phase handoff and announce AGENT_HANDOFF; answers the resume prompt for the next agent',
        params: idParams,
        body: handoffBody,
        querystring: z.object({ maxTokens: z.coerce.number().int().min(1).max(MAX_PROMPT_BUDGET).optional().describe('Fit the answer’s continuationPrompt to this many tokens (o200k_base).') }),
      },
    },
    async (request, reply) => {
      const ctx = scoped(shared, request);
      const traceparent = traceparentOf(request);
      const started = await submit(ctx, {
        ...writeCommand(ctx, request),
        kind: 'handoff.start',
        checkpointId: request.params.id,
        handoffId: newId(),
        ...request.body,
        ...(traceparent ? { traceparent } : {}),
      });
      if ('queued' in started) return sendQueued(reply, started);
      markReplay(reply, started.replayed);
      reply.header('Location', `/v1/handoffs/${started.handoff.id}`);
      const { maxTokens } = request.query;
      const continuationPrompt = maxTokens === undefined ? started.continuationPrompt : handoffPrompt(started.checkpoint.checkpoint, started.handoff, maxTokens);
      return sendWithDocs(reply, 201, { handoff: started.handoff, continuationPrompt }, { checkpoint: started.checkpoint });
    },
  );

  app.get('/v1/handoffs/:id', { schema: { tags, summary: 'A handoff: pending, then acknowledged', params: idParams } }, async (request) =>
    readHandoff(scoped(shared, request), actorOf(request), request.params.id),
  );

  app.post(
    '/v1/handoffs/:id/ack',
    { schema: { tags, summary: 'Acknowledge a handoff: the child checkpoint to resume from, and the task lease', params: idParams, body: successorBody } },
    async (request, reply) => {
      const ctx = scoped(shared, request);
      const acknowledged = await execute(ctx, { ...writeCommand(ctx, request), kind: 'handoff.ack', handoffId: request.params.id, checkpointId: newId(), leaseId: newId(), ...request.body });
      markReplay(reply, acknowledged.replayed);
      return sendWithDocs(reply, 200, { handoff: acknowledged.handoff, lease: leaseView(acknowledged.lease) }, { checkpoint: acknowledged.checkpoint });
    },
  );
}
