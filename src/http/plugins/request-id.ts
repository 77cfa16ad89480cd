/**
 * Request ids: a caller's `X-Request-Id` is kept when it is safe to log and
 * echo, otherwise the service mints a UUID. Every answer carries the id back.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Ids travel into logs and headers, so only a short, plain alphabet is trusted. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Fastify's `genReqId` constructor option. */
export function genReqId(req: IncomingMessage): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

async function requestId(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
}

export const requestIdPlugin = fp(requestId, { name: 'baton-request-id', fastify: '5.x' });
