/**
 * What a resuming agent asks of a checkpoint (DESIGN §3): its resume prompt,
 * fitted to a token budget, and which of its files changed since it was
 * written. Both only read; `docs/api.md` describes the fitting and the
 * stale-check rules.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getCheckpoint } from '../../service/checkpoint-reads.js';
import type { ServiceContext } from '../../service/context.js';
import { MAX_PROMPT_BUDGET, resumePrompt } from '../../service/resume-prompt.js';
import { staleCheck } from '../../service/stale-check.js';
import { accepts, actorOf, scoped } from '../request-context.js';
import { idParams } from '../schemas.js';

const tags = ['resume'];
const MARKDOWN = 'text/markdown';
const JSON_TYPE = 'application/json';

/** The most files one stale-check compares; an agent checks the files of one task. */
export const MAX_STALE_CHECK_FILES = 10_000;

const promptQuery = z.object({
  maxTokens: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PROMPT_BUDGET)
    .optional()
    .describe('Token budget (o200k_base); without it the whole prompt is returned.'),
  version: z.coerce.number().int().min(1).optional().describe('An earlier version of the checkpoint; default the current one.'),
});

/** Later than 1970 and before 2286 in milliseconds: anything else is a unit mistake (seconds, microseconds). */
const epochMs = z.number().int().min(0).max(9_999_999_999_999);

const staleBody = z.strictObject({
  files: z
    .array(
      z.strictObject({
        path: z.string().min(1).max(4096),
        mtime: z
          .union([z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time or milliseconds since the epoch' }), epochMs])
          .optional()
          .describe('Last modification: an ISO 8601 date-time with offset, or milliseconds since the epoch.'),
        sha256: z.string().regex(/^[a-f0-9]{64}$/i, 'must be 64 hex characters').optional().describe('SHA-256 of the content, hex.'),
      }),
    )
    .max(MAX_STALE_CHECK_FILES),
});

/** Markdown unless the caller asks for JSON and does not name markdown. */
function wantsJson(request: Parameters<typeof accepts>[0]): boolean {
  return accepts(request, JSON_TYPE) && !accepts(request, MARKDOWN);
}

export async function resumeRoutes(base: FastifyInstance, { ctx: shared }: { ctx: ServiceContext }): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/v1/checkpoints/:id/resume-prompt',
    {
      schema: {
        tags,
        summary: 'The continuation prompt, fitted to a token budget by priority (text/markdown; application/json on request)',
        params: idParams,
        querystring: promptQuery,
        produces: [MARKDOWN, JSON_TYPE],
      },
    },
    async (request, reply) => {
      const { maxTokens, version } = request.query;
      const doc = await getCheckpoint(scoped(shared, request), actorOf(request), request.params.id, version);
      const prompt = resumePrompt(doc.checkpoint, maxTokens);
      reply.header('Baton-Prompt-Tokens', String(prompt.tokens)).header('Vary', 'Accept');
      if (prompt.budget !== null) reply.header('Baton-Prompt-Budget', String(prompt.budget));
      if (prompt.dropped.length > 0) reply.header('Baton-Prompt-Dropped', prompt.dropped.join(', '));
      if (wantsJson(request)) {
        return reply.type('application/json; charset=utf-8').send(JSON.stringify({ checkpointId: doc.checkpoint.id, version: doc.version, ...prompt }));
      }
      return reply.type('text/markdown; charset=utf-8').send(prompt.text);
    },
  );

  app.post(
    '/v1/checkpoints/:id/stale-check',
    {
      schema: { tags, summary: 'Which files changed after the checkpoint: by content hash where one was recorded, else by mtime', params: idParams, body: staleBody },
      // A read sent as POST (the file list is a body): auditors may ask it too.
      config: { roles: ['writer', 'auditor', 'admin'] },
    },
    async (request) => {
      const ctx = scoped(shared, request);
      const doc = await getCheckpoint(ctx, actorOf(request), request.params.id);
      return staleCheck(doc.checkpoint, request.body.files, ctx.now());
    },
  );
}
