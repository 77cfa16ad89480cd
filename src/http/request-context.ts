/**
 * What routes take from a request for the service: who asks, the parts of a
 * command every write shares (its operation id from the Idempotency-Key, a
 * fingerprint of the request, its time, the fencing token), and the If-Match
 * version; and how stored checkpoints are answered.
 *
 * @module
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor, CommandBase, Queued } from '../domain/commands.js';
import { canonicalJson, sha256Hex } from '../domain/hash.js';
import { AppError } from '../errors.js';
import { commandBase } from '../service/commands.js';
import type { ServiceContext } from '../service/context.js';
import { queuedDoc } from '../service/queued-reads.js';
import { joinedText } from './answer-text.js';

/**
 * What an answer takes of a stored checkpoint, as the service hands it out:
 * its JSON text, sent as it is, and its version, for the ETag. Routes name
 * no repository type (`docs/architecture.md`), so this is said here by shape.
 */
export interface SentDoc {
  readonly json: string;
  readonly version: number;
}

export function actorOf(request: FastifyRequest): Actor {
  const { role, tenant, subject } = request.principal;
  return { role, tenant, subject };
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The shared part of a write's command, and, when `ifMatch` says so, the
 * version If-Match names (`required`: absent is 428).
 */
export function writeCommand(ctx: ServiceContext, request: FastifyRequest, ifMatch?: 'required' | 'optional'): CommandBase & { ifMatch?: number } {
  let version: number | undefined;
  if (ifMatch !== undefined) version = ifMatchVersion(request, ifMatch === 'required');
  const key = request.headers['idempotency-key'];
  if (key !== undefined && (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key))) {
    throw new AppError('validation_failed', {
      errors: [{ field: 'headers.idempotency-key', message: 'must be 1 to 255 visible ASCII characters' }],
    });
  }
  const epoch = request.headers['baton-lease-epoch'];
  if (epoch !== undefined && (typeof epoch !== 'string' || !/^\d{1,15}$/.test(epoch))) {
    throw new AppError('validation_failed', { errors: [{ field: 'headers.baton-lease-epoch', message: 'must be a non-negative integer' }] });
  }
  const command: CommandBase & { ifMatch?: number } = commandBase(ctx, {
    actor: actorOf(request),
    ...(key !== undefined ? { idempotency: { key, fingerprint: fingerprint(request) } } : {}),
    ...(epoch !== undefined ? { leaseEpoch: Number(epoch) } : {}),
  });
  if (version !== undefined) command.ifMatch = version;
  return command;
}

/** What an Idempotency-Key is bound to: the same key with another request is refused. */
function fingerprint(request: FastifyRequest): string {
  return sha256Hex(
    canonicalJson({
      method: request.method,
      url: request.url,
      ifMatch: request.headers['if-match'] ?? null,
      // A raw document (an import) is bound by its digest, not re-encoded as JSON.
      body: request.body === undefined ? null : Buffer.isBuffer(request.body) ? { sha256: sha256Hex(request.body) } : request.body,
    }),
  );
}

/**
 * The version named in If-Match: `"3"`, `W/"3"` or `3`; `*` matches any
 * version (undefined). Absent throws 428 when `required`.
 */
export function ifMatchVersion(request: FastifyRequest, required: boolean): number | undefined {
  const header = request.headers['if-match'];
  if (header === undefined || header === '') {
    if (required) throw new AppError('precondition_required');
    return undefined;
  }
  const value = String(header).trim();
  if (value === '*') return undefined;
  const match = /^(?:W\/)?"?(\d{1,15})"?$/.exec(value);
  if (!match) {
    throw new AppError('validation_failed', { errors: [{ field: 'headers.if-match', message: 'must be an ETag this service issued, e.g. "3"' }] });
  }
  return Number(match[1]);
}

export function etag(version: number): string {
  return `"${version}"`;
}

/** Marks a reply that repeats the first answer to an Idempotency-Key. */
export function markReplay(reply: FastifyReply, replayed: boolean): void {
  if (replayed) reply.header('Idempotent-Replayed', 'true');
}

/** Whether the request's Accept header names `mediaType` (with a non-zero q). */
export function accepts(request: FastifyRequest, mediaType: string): boolean {
  const header = request.headers.accept;
  if (typeof header !== 'string') return false;
  return header.split(',').some((part) => {
    const [type, ...params] = part.trim().split(';');
    if (type?.trim().toLowerCase() !== mediaType) return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** The service context with the request's logger, so service logs carry the request id. */
export function scoped(ctx: ServiceContext, request: FastifyRequest): ServiceContext {
  return { ...ctx, log: request.log, ...(request.traceContext !== undefined ? { traceContext: request.traceContext } : {}) };
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers one stored checkpoint from its stored text, with its ETag; a view with writes still queued is marked `queued`. */
export function sendDoc(reply: FastifyReply, doc: SentDoc, status = 200, queued = false): FastifyReply {
  reply.code(status).header('ETag', etag(doc.version)).type(JSON_TYPE);
  if (!queued) return reply.send(doc.json);
  return reply.header('Baton-Queued', 'true').send(`{"queued":true,${doc.json.slice(1)}`);
}

/**
 * Answers a write the local queue accepted: 202, `Baton-Queued: true`, the
 * ids the client will see, the version when known, and the checkpoint as it
 * will be when the queue knows it whole.
 */
export function sendQueued(reply: FastifyReply, queued: Queued): FastifyReply {
  reply.header('Baton-Queued', 'true').header('Location', `/v1/checkpoints/${queued.checkpointId}`);
  if (queued.version !== undefined) reply.header('ETag', etag(queued.version));
  const { checkpoint, ...ids } = queued;
  return sendWithDocs(reply, 202, ids, checkpoint ? { checkpoint: queuedDoc(checkpoint) } : {});
}

/** Answers a list of stored checkpoints (`{ items, ... }`) by joining their stored texts. */
export function sendDocs(reply: FastifyReply, page: { items: SentDoc[]; nextCursor?: string; corrupted?: string[] }): FastifyReply {
  const { items, ...rest } = page;
  const tail = JSON.stringify(rest);
  const pieces = ['{"items":['];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) pieces.push(',');
    pieces.push(items[i]!.json);
  }
  pieces.push(tail === '{}' ? ']}' : `],${tail.slice(1)}`);
  return reply.type(JSON_TYPE).send(joinedText(pieces));
}

/**
 * Answers a JSON object some of whose members are stored checkpoints (e.g.
 * `{ handoff, checkpoint, continuationPrompt }`): the checkpoints go in as
 * their stored text, the rest as ordinary JSON.
 */
export function sendWithDocs(reply: FastifyReply, status: number, body: Record<string, unknown>, docs: Record<string, SentDoc | undefined>): FastifyReply {
  const members = Object.entries(docs).map(([name, doc]) => `${JSON.stringify(name)}:${doc === undefined ? 'null' : doc.json}`);
  const rest = JSON.stringify(body);
  if (rest !== '{}') members.push(rest.slice(1, -1));
  return reply.code(status).type(JSON_TYPE).send(`{${members.join(',')}}`);
}

const TRACEPARENT = /^[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The caller's W3C `traceparent`, when it has a valid one; an invalid one is ignored, as W3C Trace Context says. */
export function traceparentOf(request: FastifyRequest): string | undefined {
  const header = request.headers.traceparent;
  return typeof header === 'string' && TRACEPARENT.test(header.trim().toLowerCase()) ? header.trim().toLowerCase() : undefined;
}
