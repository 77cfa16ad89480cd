/**
 * A server span per request, continuing the caller's `traceparent`, with the
 * route, the status and the request id. Its context goes to the service
 * with the request (`request.traceContext`, handed on by `scoped`), so the
 * request's store transactions are its children and its commands annotate
 * it; and the request's logger carries the trace and span ids (the span
 * is started as Fastify makes that logger, `requestLogger`). Skipped
 * while no tracer provider is registered (`tracerRegistered`): the API's
 * tracer would make a no-op span, and with no propagator the caller's
 * `traceparent` is not read either.
 *
 * @module
 */
import { SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, RawRequestDefaultExpression } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';
import fp from 'fastify-plugin';
import { extractContext, tracer, tracerRegistered } from '../../telemetry/tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    span?: Span;
    /** The context of the request's span, for the service (`scoped`). */
    traceContext?: Context;
  }
}

/** Where a request's server span waits between its logger's making and the `onRequest` hook. */
const STARTED = Symbol('baton.serverSpan');

interface Started {
  span: Span;
  parent: Context;
}

type WithSpan = IncomingMessage & { [STARTED]?: Started };

/**
 * Fastify's `childLoggerFactory`: the request's logger, and with tracing
 * on, the request's server span, started here so that the one child logger
 * a request gets names its trace and span. A second child made in
 * `onRequest` turned the first into a prototype, which V8 pays for on every
 * traced request (`docs/performance.md`, issue 44).
 */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions, raw: RawRequestDefaultExpression): FastifyBaseLogger {
  const span = tracerRegistered() ? startServerSpan(raw as WithSpan) : undefined;
  if (span === undefined || !span.isRecording()) return logger.child(bindings, options);
  // Every line the request logs names its trace, to find the trace from the line.
  const { traceId, spanId } = span.spanContext();
  return logger.child({ ...bindings, trace_id: traceId, span_id: spanId }, options);
}

function startServerSpan(raw: WithSpan): Span {
  const parent = extractContext(raw.headers);
  const span = tracer().startSpan(raw.method ?? 'HTTP', {
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': raw.method, 'url.path': raw.url?.split('?')[0] },
  }, parent);
  raw[STARTED] = { span, parent };
  return span;
}

async function tracing(app: FastifyInstance): Promise<void> {
  app.decorateRequest('span');
  app.decorateRequest('traceContext');
  app.addHook('onRequest', (request, _reply, done) => {
    if (!tracerRegistered()) {
      done();
      return;
    }
    const raw = request.raw as WithSpan;
    // Started with the request's logger (`requestLogger`); a request whose logger was made otherwise starts it here.
    if (raw[STARTED] === undefined) startServerSpan(raw);
    const { span, parent } = raw[STARTED]!;
    raw[STARTED] = undefined;
    const route = request.routeOptions.url ?? 'unmatched';
    span.updateName(`${request.method} ${route}`);
    span.setAttributes({ 'http.route': route, 'baton.request.id': request.id });
    request.span = span;
    request.traceContext = trace.setSpan(parent, span);
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
