/**
 * /v1/checkpoints: create, read, change, finalize, link, lineage, revisions
 * and search (DESIGN §3).
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkpointInput, type Checkpoint } from '../../domain/checkpoint.js';
import { AppError } from '../../errors.js';
import { finalizeCheckpoint, linkCheckpoints, patchCheckpoint } from '../../service/checkpoint-changes.js';
import type { ServiceContext } from '../../service/context.js';
import { createCheckpoint } from '../../service/mutations.js';
import { checkpointLineage, checkpointRevisions } from '../../service/queries.js';
import { getCheckpoint } from '../../service/reads.js';
import { searchCheckpoints, type SearchQuery } from '../../service/search.js';
import type { Signer } from '../../service/signing.js';
import { actorOf, etag, markReplay, scoped, sendDoc, sendDocs, writeOptions } from '../request-context.js';
import { finalizeBody, idParams, linkBody, searchQuery, versionQuery } from '../schemas.js';

export interface CheckpointRoutesOptions {
  ctx: ServiceContext;
  signer: Signer | undefined;
}

const tags = ['checkpoints'];

function sendCheckpoint(reply: FastifyReply, checkpoint: Checkpoint, status = 200): FastifyReply {
  return reply.code(status).header('ETag', etag(checkpoint.version)).send(checkpoint);
}

export async function checkpointRoutes(base: FastifyInstance, { ctx, signer }: CheckpointRoutesOptions): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post('/v1/checkpoints', { schema: { tags, summary: 'Create a checkpoint', body: checkpointInput } }, async (request, reply) => {
    const { checkpoint, replayed } = await createCheckpoint(scoped(ctx, request), actorOf(request), request.body, writeOptions(request));
    markReplay(reply, replayed);
    reply.header('Location', `/v1/checkpoints/${checkpoint.id}`);
    return sendCheckpoint(reply, checkpoint, 201);
  });

  app.get('/v1/checkpoints/:id', { schema: { tags, summary: 'Read a checkpoint (hash verified)', params: idParams, querystring: versionQuery } }, async (request, reply) => {
    const doc = await getCheckpoint(scoped(ctx, request), actorOf(request), request.params.id, request.query.version);
    if (request.query.version === undefined && noneMatch(request.headers['if-none-match'], doc.version)) {
      return reply.code(304).header('ETag', etag(doc.version)).send();
    }
    return sendDoc(reply, doc);
  });

  app.patch(
    '/v1/checkpoints/:id',
    { schema: { tags, summary: 'Change a checkpoint with a JSON Merge Patch (If-Match required)', params: idParams, body: z.unknown() } },
    async (request, reply) => {
      const options = writeOptions(request, 'required');
      const { checkpoint, replayed } = await patchCheckpoint(scoped(ctx, request), actorOf(request), request.params.id, request.body, options);
      markReplay(reply, replayed);
      return sendCheckpoint(reply, checkpoint);
    },
  );

  app.post(
    '/v1/checkpoints/:id/finalize',
    { schema: { tags, summary: 'Finalize a checkpoint; it is immutable afterwards', params: idParams, body: finalizeBody } },
    async (request, reply) => {
      const options = writeOptions(request, 'optional');
      const { checkpoint, replayed } = await finalizeCheckpoint(scoped(ctx, request), actorOf(request), signer, request.params.id, request.body, options);
      markReplay(reply, replayed);
      return sendCheckpoint(reply, checkpoint);
    },
  );

  app.post(
    '/v1/checkpoints/:id/links',
    { schema: { tags, summary: 'Link a child checkpoint to this parent', params: idParams, body: linkBody } },
    async (request, reply) => {
      const { checkpoint, replayed } = await linkCheckpoints(scoped(ctx, request), actorOf(request), request.params.id, request.body.childId, writeOptions(request));
      markReplay(reply, replayed);
      return reply.code(201).header('ETag', etag(checkpoint.version)).send({ parentId: request.params.id, childId: checkpoint.id, child: checkpoint });
    },
  );

  app.get('/v1/checkpoints/:id/lineage', { schema: { tags, summary: 'Ancestors to the root, and children', params: idParams } }, async (request) =>
    checkpointLineage(scoped(ctx, request), actorOf(request), request.params.id),
  );

  app.get('/v1/checkpoints/:id/revisions', { schema: { tags, summary: 'Every version with its hash and time', params: idParams } }, async (request) =>
    checkpointRevisions(scoped(ctx, request), actorOf(request), request.params.id),
  );

  app.get('/v1/checkpoints', { schema: { tags, summary: 'Search checkpoints', querystring: searchQuery } }, async (request, reply) =>
    sendDocs(reply, await searchCheckpoints(scoped(ctx, request), actorOf(request), toSearch(request.query, request))),
  );
}

/** RFC 9110 §13.1.2: weak comparison against a list of ETags, or `*`. */
function noneMatch(header: string | undefined, version: number): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const value = tag.trim();
    return value === '*' || value.replace(/^W\//, '') === etag(version);
  });
}

function toSearch(query: z.infer<typeof searchQuery>, request: FastifyRequest): SearchQuery {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(request.query as Record<string, unknown>)) {
    if (!key.startsWith('label.')) continue;
    const name = key.slice('label.'.length);
    if (name === '' || typeof value !== 'string') {
      throw new AppError('validation_failed', { errors: [{ field: `query.${key}`, message: 'use label.NAME=VALUE once per label' }] });
    }
    labels[name] = value;
  }
  const search: SearchQuery = { limit: query.limit };
  for (const field of ['taskId', 'agentId', 'agentType', 'phase', 'status', 'finalStatus', 'file', 'q', 'cursor'] as const) {
    const value = query[field];
    if (value !== undefined) search[field] = value;
  }
  // Stored times are UTC with milliseconds; compare like with like.
  if (query.from !== undefined) search.from = new Date(query.from).toISOString();
  if (query.to !== undefined) search.to = new Date(query.to).toISOString();
  if (Object.keys(labels).length > 0) search.labels = labels;
  return search;
}
