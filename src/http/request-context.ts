/**
 * What routes take from a request for the service: who asks, and how to make
 * the write safe to repeat (Idempotency-Key, a fingerprint of the request,
 * the fencing token), and the If-Match version.
 *
 * @module
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson, sha256Hex } from '../domain/hash.js';
import { AppError } from '../errors.js';
import type { Actor, ServiceContext, WriteOptions } from '../service/context.js';
import type { CheckpointDoc } from '../service/records.js';

export function actorOf(request: FastifyRequest): Actor {
  const { role, tenant, subject } = request.principal;
  return { role, tenant, subject };
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * How the write is made safe to repeat, and, when `ifMatch` says so, the
 * version If-Match names (`required`: absent is 428).
 */
export function writeOptions(request: FastifyRequest, ifMatch?: 'required' | 'optional'): WriteOptions & { ifMatch?: number } {
  const options: WriteOptions & { ifMatch?: number } = {};
  if (ifMatch !== undefined) {
    const version = ifMatchVersion(request, ifMatch === 'required');
    if (version !== undefined) options.ifMatch = version;
  }
  const key = request.headers['idempotency-key'];
  if (key !== undefined) {
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
      throw new AppError('validation_failed', {
        errors: [{ field: 'headers.idempotency-key', message: 'must be 1 to 255 visible ASCII characters' }],
      });
    }
    options.idempotencyKey = key;
    options.fingerprint = sha256Hex(
      canonicalJson({
        method: request.method,
        url: request.url,
        ifMatch: request.headers['if-match'] ?? null,
        body: request.body === undefined ? null : request.body,
      }),
    );
  }
  const epoch = request.headers['baton-lease-epoch'];
  if (epoch !== undefined) {
    if (typeof epoch !== 'string' || !/^\d{1,15}$/.test(epoch)) {
      throw new AppError('validation_failed', { errors: [{ field: 'headers.baton-lease-epoch', message: 'must be a non-negative integer' }] });
    }
    options.leaseEpoch = Number(epoch);
  }
  return options;
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
  return { ...ctx, log: request.log };
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers one stored checkpoint from its stored text, with its ETag. */
export function sendDoc(reply: FastifyReply, doc: CheckpointDoc, status = 200): FastifyReply {
  return reply.code(status).header('ETag', etag(doc.version)).type(JSON_TYPE).send(doc.json);
}

/** Answers a list of stored checkpoints (`{ items, ... }`) by joining their stored texts. */
export function sendDocs(reply: FastifyReply, page: { items: CheckpointDoc[]; nextCursor?: string; corrupted?: string[] }): FastifyReply {
  const { items, ...rest } = page;
  const tail = JSON.stringify(rest);
  const members = tail === '{}' ? '' : `,${tail.slice(1, -1)}`;
  return reply.type(JSON_TYPE).send(`{"items":[${items.map((doc) => doc.json).join(',')}]${members}}`);
}
