/**
 * A server span per request, continuing the caller's `traceparent`, with the
 * route, the status and the request id; everything the request does (its
 * store transactions, its commands) runs in that span's context, so their
 * spans are its children. Free when tracing is not configured: the API's
 * tracer is a no-op.
 *
 * @module
 */
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { extractContext, tracer } from '../../telemetry/tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    span?: Span;
  }
}

async function tracing(app: FastifyInstance): Promise<void> {
  app.decorateRequest('span');
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = extractContext(request.headers);
    const route = request.routeOptions.url ?? 'unmatched';
    const span = tracer().startSpan(`${request.method} ${route}`, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': request.method, 'http.route': route, 'url.path': request.url.split('?')[0], 'baton.request.id': request.id },
    }, parent);
    request.span = span;
    // The rest of the request (hooks, handler, the service below) runs in the span's context.
    context.with(trace.setSpan(parent, span), done);
  });
  app.addHook('onError', async (request, _reply, error) => {
    request.span?.recordException(error);
  });
  app.addHook('onResponse', async (request, reply) => {
    const span = request.span;
    if (span === undefined) return;
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
}

export const tracingPlugin = fp(tracing, { name: 'baton-tracing', fastify: '5.x' });
