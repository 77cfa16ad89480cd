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
 * @module
 */
import { context, propagation, trace, type Attributes, type Context, type Link, type Span, type SpanContext, TraceFlags } from '@opentelemetry/api';

export const TRACER_NAME = 'baton';

export function tracer() {
  return trace.getTracer(TRACER_NAME);
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
  const sdk = new NodeSDK({ instrumentations: [] });
  sdk.start();
  return () => sdk.shutdown();
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a W3C `traceparent` names, or undefined for one that is not valid. */
export function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (match === null || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  return { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16) & TraceFlags.SAMPLED, isRemote: true };
}

/** The `traceparent` of the active span, or undefined when none is recording. */
export function currentTraceparent(): string | undefined {
  const span = trace.getActiveSpan()?.spanContext();
  if (span === undefined || !trace.isSpanContextValid(span)) return undefined;
  return `00-${span.traceId}-${span.spanId}-0${span.traceFlags & TraceFlags.SAMPLED}`;
}

/** Links the active span to the trace `traceparent` names (a handoff's sender, a recovered checkpoint's writer). */
export function linkTo(traceparent: string | undefined, attributes: Attributes = {}): void {
  const target = spanContextOf(traceparent);
  if (target !== undefined) trace.getActiveSpan()?.addLink({ context: target, attributes } satisfies Link);
}

/** Sets attributes on the active span, leaving out the absent ones; made only when a span records (nothing on the hot path when tracing is off). */
export function annotate(attributes: () => Record<string, string | number | undefined>): void {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return;
  for (const [key, value] of Object.entries(attributes())) if (value !== undefined) span.setAttribute(key, value);
}

/** The context a request's headers carry (its `traceparent`), to continue its trace. */
export function extractContext(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(context.active(), headers);
}

/** Runs `work` in a span of its own, ended when it settles; an error is recorded on it. */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: 2 });
      throw error;
    } finally {
      span.end();
    }
  });
}
