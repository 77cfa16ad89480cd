/**
 * Traces (DESIGN §7): OpenTelemetry, configured only by the standard
 * `OTEL_*` variables. With an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) the Node SDK starts first thing in the
 * process and exports by `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`,
 * `http/json`, `grpc`), sampled by `OTEL_TRACES_SAMPLER`, named by
 * `OTEL_SERVICE_NAME` (default `baton`); without one nothing is started, and
 * the API's no-op tracer makes every span below free.
 *
 * What is traced: each request (a server span continuing the caller's
 * `traceparent`), each store transaction (attempts, conflicts and retries as
 * events), the write queue's replays and the maintenance runner's batches;
 * spans carry the GenAI attributes `gen_ai.conversation.id` (the task) and
 * `gen_ai.agent.id`, and `baton.checkpoint.id`, `baton.lease.epoch`,
 * `baton.handoff.id`. `docs/tracing.md` is the operator's guide.
 *
 * The trace is handed down explicitly, not through async context: a request's
 * span context travels in the service context (`traceContext`), and the SDK
 * runs with a context manager that does nothing. On Node 20 the SDK's
 * `AsyncLocalStorage` manager hooks every promise, which cost creates about
 * 8 % with tracing on (`docs/performance.md`).
 *
 * @module
 */
import { context, propagation, ProxyTracerProvider, ROOT_CONTEXT, trace, type Attributes, type Context, type ContextManager, type Link, type Span, type SpanContext, TraceFlags } from '@opentelemetry/api';

export const TRACER_NAME = 'baton';

export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/** The API's no-op provider: what a provider that nothing registered delegates to. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether a tracer provider is registered (the SDK started, in this process
 * or by a test), asked per request: without one every span is a no-op and
 * no propagator reads a `traceparent`, so a request's span is not worth
 * its few microseconds.
 */
export function tracerRegistered(): boolean {
  const provider = trace.getTracerProvider() as Partial<ProxyTracerProvider>;
  return (typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider) !== NOOP_PROVIDER;
}

/** Whether the environment asks for traces to be exported. */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Starts the Node SDK when the environment asks for it; answers how to stop it (flushing what is pending). */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<() => Promise<void>> {
  if (!tracingConfigured(env)) return async () => undefined;
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  env.OTEL_SERVICE_NAME ??= 'baton';
  // No auto-instrumentation: the service is bundled, and its own spans say what it does.
  const sdk = new NodeSDK({ instrumentations: [], contextManager: EXPLICIT_CONTEXT });
  sdk.start();
  return () => sdk.shutdown();
}

/** A context manager that keeps nothing: every span's parent is passed to it. */
const EXPLICIT_CONTEXT: ContextManager = {
  active: () => ROOT_CONTEXT,
  with: (_context, fn, thisArg, ...args) => fn.call(thisArg, ...args),
  bind: (_context, target) => target,
  enable() {
    return this;
  },
  disable() {
    return this;
  },
};

/** What carries a trace through the service: the context of the request, or of the background pass, it runs for. */
export interface Traced {
  traceContext?: Context;
}

/** The span `traced` runs in, if any. */
function spanOf(traced: Traced | undefined): Span | undefined {
  return trace.getSpan(traced?.traceContext ?? context.active());
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a W3C `traceparent` names, or undefined for one that is not valid. */
export function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (match === null || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  return { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16) & TraceFlags.SAMPLED, isRemote: true };
}

/** The `traceparent` of the span `traced` runs in, or undefined when there is none. */
export function currentTraceparent(traced?: Traced): string | undefined {
  const span = spanOf(traced)?.spanContext();
  if (span === undefined || !trace.isSpanContextValid(span)) return undefined;
  return `00-${span.traceId}-${span.spanId}-0${span.traceFlags & TraceFlags.SAMPLED}`;
}

/** Links the span `traced` runs in to the trace `traceparent` names (a handoff's sender, a recovered checkpoint's writer). */
export function linkTo(traced: Traced, traceparent: string | undefined, attributes: Attributes = {}): void {
  const target = spanContextOf(traceparent);
  if (target !== undefined) spanOf(traced)?.addLink({ context: target, attributes } satisfies Link);
}

/** Sets attributes on the span `traced` runs in, leaving out the absent ones; made only when a span records (nothing on the hot path when tracing is off). */
export function annotate(traced: Traced, attributes: () => Record<string, string | number | undefined>): void {
  const span = spanOf(traced);
  if (span === undefined || !span.isRecording()) return;
  for (const [key, value] of Object.entries(attributes())) if (value !== undefined) span.setAttribute(key, value);
}

/** The context a request's headers carry (its `traceparent`), to continue its trace. */
export function extractContext(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(context.active(), headers);
}

/** Runs `work` in a span of its own, handing it the span's context; ended when it settles, an error recorded on it. */
export async function inSpan<T>(name: string, attributes: Attributes, work: (traceContext: Context) => Promise<T>): Promise<T> {
  const within = context.active();
  const span = tracer().startSpan(name, { attributes }, within);
  try {
    return await work(trace.setSpan(within, span));
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: 2 });
    throw error;
  } finally {
    span.end();
  }
}
