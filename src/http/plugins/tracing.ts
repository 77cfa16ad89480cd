/**
 * A server span per request, continuing the caller's `traceparent`, with the
 * route, the status and the request id. Its context goes to the service
 * with the request (`request.traceContext`, handed on by `scoped`), so the
 * request's store transactions are its children and its commands annotate
 * it; and the request's logger carries the trace and span ids. Skipped
 * while no tracer provider is registered (`tracerRegistered`): the API's
 * tracer would make a no-op span, and with no propagator the caller's
 * `traceparent` is not read either.
 *
 * @module
 */
import { SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { extractContext, tracer, tracerRegistered } from '../../telemetry/tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    span?: Span;
    /** The context of the request's span, for the service (`scoped`). */
    traceContext?: Context;
  }
}

async function tracing(app: FastifyInstance): Promise<void> {
  app.decorateRequest('span');
  app.decorateRequest('traceContext');
  app.addHook('onRequest', (request, _reply, done) => {
    if (!tracerRegistered()) {
      done();
      return;
    }
    const parent = extractContext(request.headers);
    const route = request.routeOptions.url ?? 'unmatched';
    const span = tracer().startSpan(`${request.method} ${route}`, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': request.method, 'http.route': route, 'url.path': request.url.split('?')[0], 'baton.request.id': request.id },
    }, parent);
    request.span = span;
    request.traceContext = trace.setSpan(parent, span);
    // Every line the request logs from here on names its trace, to find the trace from the line.
    if (span.isRecording()) {
      const { traceId, spanId } = span.spanContext();
      request.log = request.log.child({ trace_id: traceId, span_id: spanId });
    }
    done();
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
