/**
 * /v1/checkpoints: create, read, change, finalize, link, lineage, revisions
 * and search (DESIGN §3).
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkpointInput } from '../../domain/checkpoint.js';
import type { Queued } from '../../domain/commands.js';
import { newId } from '../../domain/ids.js';
import { AppError } from '../../errors.js';
import { checkpointLineage, checkpointRevisions } from '../../service/checkpoint-reads.js';
import type { WriteResult } from '../../service/checkpoint-writes.js';
import type { ServiceContext } from '../../service/context.js';
import { readCheckpoint } from '../../service/queued-reads.js';
import { submit } from '../../service/submit.js';
import { searchCheckpoints, type SearchQuery } from '../../service/search.js';
import { actorOf, etag, markReplay, scoped, sendDoc, sendDocs, sendQueued, writeCommand } from '../request-context.js';
import { idParams, pageQuery, searchQuery, versionQuery } from '../schemas.js';
import { finalizeBody, linkBody } from '../../domain/requests.js';

const tags = ['checkpoints'];

/** Answers a write with the checkpoint it stored, or, when the store was unavailable, the queue's 202. */
function sendWritten(reply: FastifyReply, written: WriteResult | Queued, status = 200): FastifyReply {
  if ('queued' in written) return sendQueued(reply, written);
  markReplay(reply, written.replayed);
  return sendDoc(reply, written.doc, status);
}

export async function checkpointRoutes(base: FastifyInstance, { ctx: shared }: { ctx: ServiceContext }): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post('/v1/checkpoints', { schema: { tags, summary: 'Create a checkpoint', body: checkpointInput } }, async (request, reply) => {
    const ctx = scoped(shared, request);
    const command = { ...writeCommand(ctx, request), kind: 'checkpoint.create', taskId: request.body.taskId, checkpointId: newId(), input: request.body } as const;
    const written = await submit(ctx, command);
    reply.header('Location', `/v1/checkpoints/${written.checkpointId}`);
    return sendWritten(reply, written, 201);
  });

  app.get('/v1/checkpoints/:id', { schema: { tags, summary: 'Read a checkpoint (hash verified)', params: idParams, querystring: versionQuery } }, async (request, reply) => {
    const { doc, queued } = await readCheckpoint(scoped(shared, request), actorOf(request), request.params.id, request.query.version);
    if (request.query.version === undefined && noneMatch(request.headers['if-none-match'], doc.version)) {
      return reply.code(304).header('ETag', etag(doc.version)).send();
    }
    return sendDoc(reply, doc, 200, queued);
  });

  app.patch(
    '/v1/checkpoints/:id',
    { schema: { tags, summary: 'Change a checkpoint with a JSON Merge Patch (If-Match required)', params: idParams, body: z.unknown() } },
    async (request, reply) => {
      const ctx = scoped(shared, request);
      const command = { ...writeCommand(ctx, request, 'required'), kind: 'checkpoint.update', checkpointId: request.params.id, patch: request.body } as const;
      return sendWritten(reply, await submit(ctx, command));
    },
  );

  app.post(
    '/v1/checkpoints/:id/finalize',
    { schema: { tags, summary: 'Finalize a checkpoint; it is immutable afterwards', params: idParams, body: finalizeBody } },
    async (request, reply) => {
      const ctx = scoped(shared, request);
      const { status, signature } = request.body;
      const command = {
        ...writeCommand(ctx, request, 'optional'),
        kind: 'checkpoint.finalize',
        checkpointId: request.params.id,
        status,
        ...(signature ? { signature } : {}),
      } as const;
      return sendWritten(reply, await submit(ctx, command));
    },
  );

  app.post(
    '/v1/checkpoints/:id/links',
    { schema: { tags, summary: 'Link a child checkpoint to this parent', params: idParams, body: linkBody } },
    async (request, reply) => {
      const ctx = scoped(shared, request);
      const { id: parentId } = request.params;
      const command = { ...writeCommand(ctx, request), kind: 'checkpoint.link', parentId, childId: request.body.childId } as const;
      const written = await submit(ctx, command);
      if ('queued' in written) return sendQueued(reply, written);
      markReplay(reply, written.replayed);
      const head = JSON.stringify({ parentId, childId: written.checkpointId });
      return reply.code(201).header('ETag', etag(written.version)).type('application/json; charset=utf-8').send(`${head.slice(0, -1)},"child":${written.doc.json}}`);
    },
  );

  app.get(
    '/v1/checkpoints/:id/lineage',
    { schema: { tags, summary: 'Ancestors to the root, and children, in pages', params: idParams, querystring: pageQuery } },
    async (request) => checkpointLineage(scoped(shared, request), actorOf(request), request.params.id, pageOf(request.query)),
  );

  app.get(
    '/v1/checkpoints/:id/revisions',
    { schema: { tags, summary: 'Every version with its hash and time, in pages', params: idParams, querystring: pageQuery } },
    async (request) => checkpointRevisions(scoped(shared, request), actorOf(request), request.params.id, pageOf(request.query)),
  );

  app.get('/v1/checkpoints', { schema: { tags, summary: 'Search checkpoints', querystring: searchQuery } }, async (request, reply) =>
    sendDocs(reply, await searchCheckpoints(scoped(shared, request), actorOf(request), toSearch(request.query, request))),
  );
}

function pageOf(query: { limit: number; cursor?: string | undefined }): { limit: number; cursor?: string } {
  return { limit: query.limit, ...(query.cursor ? { cursor: query.cursor } : {}) };
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
