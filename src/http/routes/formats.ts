/**
 * The interchange formats over HTTP (DESIGN §3): `POST /v1/import` reads a
 * checkpoint file as agents already write it and creates the checkpoint
 * through the same command as `POST /v1/checkpoints`; `GET
 * /v1/checkpoints/:id/export` writes a stored checkpoint back in a format.
 * The converters are in src/formats and never touch the store.
 *
 * @module
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { checkpointInput, type CheckpointInput } from '../../domain/checkpoint.js';
import { newId } from '../../domain/ids.js';
import { AppError } from '../../errors.js';
import { decodeUtf8, FORMATS, FormatError, type ImportFormatName } from '../../formats/index.js';
import { getCheckpoint } from '../../service/checkpoint-reads.js';
import type { ServiceContext } from '../../service/context.js';
import { submit } from '../../service/submit.js';
import { actorOf, markReplay, scoped, sendQueued, sendWithDocs, writeCommand } from '../request-context.js';
import { exportQuery, idParams, importQuery } from '../schemas.js';

/** The media types each format's documents may be sent as. */
const ACCEPTED: Record<ImportFormatName, readonly string[]> = {
  'builder-state': ['application/json'],
  pipeline: ['application/json'],
  'workflow-xml': ['application/xml', 'text/xml'],
  markdown: ['text/markdown', 'text/plain'],
};

const RAW_TYPES = ['application/json', 'application/xml', 'text/xml', 'text/markdown', 'text/plain'];

function mediaTypeOf(request: FastifyRequest): string {
  return String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The checkpoint a document describes, or a 400 that points at the fault. */
function readDocument(format: ImportFormatName, body: Buffer, options: { taskId?: string; agentId?: string }): CheckpointInput {
  let input: CheckpointInput;
  try {
    input = FORMATS[format].parse(decodeUtf8(body), options);
  } catch (error) {
    if (error instanceof FormatError) throw new AppError('validation_failed', { errors: [error.toFieldError()], extra: { format } });
    throw error;
  }
  // A converter's output is checked like any request body: nothing unchecked reaches the store.
  const parsed = checkpointInput.safeParse(input);
  if (!parsed.success) {
    throw new AppError('validation_failed', { errors: parsed.error.issues.map((issue) => ({ field: issue.path.join('.') || 'body', message: issue.message })), extra: { format } });
  }
  return parsed.data;
}

export async function formatRoutes(base: FastifyInstance, { ctx: shared }: { ctx: ServiceContext }): Promise<void> {
  const app = base.withTypeProvider<ZodTypeProvider>();
  // Documents are read by their converter, from the bytes: this plugin's routes take every format's media type raw.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(RAW_TYPES, { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post(
    '/v1/import',
    {
      schema: {
        tags: ['formats'],
        summary: 'Import a checkpoint file in one of the formats agents write (builder-state, pipeline, workflow-xml, markdown)',
        querystring: importQuery,
        consumes: RAW_TYPES,
      },
    },
    async (request, reply) => {
      const { format, taskId, agentId } = request.query;
      if (!ACCEPTED[format].includes(mediaTypeOf(request))) {
        throw new AppError('unsupported_media_type', { detail: `Send a ${format} document as ${ACCEPTED[format].join(' or ')}.` });
      }
      if (!Buffer.isBuffer(request.body)) throw new AppError('validation_failed', { errors: [{ field: 'body', message: 'send the document as the request body' }] });
      const input = readDocument(format, request.body, { ...(taskId ? { taskId } : {}), ...(agentId ? { agentId } : {}) });
      const ctx = scoped(shared, request);
      const written = await submit(ctx, { ...writeCommand(ctx, request), kind: 'checkpoint.create', taskId: input.taskId, checkpointId: newId(), input });
      if ('queued' in written) return sendQueued(reply, written);
      markReplay(reply, written.replayed);
      reply.header('Location', `/v1/checkpoints/${written.checkpointId}`).header('ETag', `"${written.version}"`);
      return sendWithDocs(reply, 201, {}, { checkpoint: written.doc });
    },
  );

  app.get(
    '/v1/checkpoints/:id/export',
    { schema: { tags: ['formats'], summary: 'Export a checkpoint in a format agents read (the four import formats, and resume-block)', params: idParams, querystring: exportQuery } },
    async (request, reply) => {
      const doc = await getCheckpoint(scoped(shared, request), actorOf(request), request.params.id);
      const format = FORMATS[request.query.format];
      return reply.type(`${format.mediaType}; charset=utf-8`).header('ETag', `"${doc.version}"`).send(format.render(doc.checkpoint));
    },
  );
}
