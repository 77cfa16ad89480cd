/**
 * A request's server span is made only while a tracer provider is
 * registered, which is asked per request: a provider registered after the
 * service started (an SDK started in the process) is used from the next
 * request on, and one shut down stops it again.
 */
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { tracerRegistered } from '../../src/telemetry/tracing.js';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../support/app.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const create = (taskId: string) =>
  t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth('writer'), traceparent: `00-${TRACE}-00f067aa0ba902b7-01` }, payload: checkpointBody(taskId) });

it('traces requests from the moment a provider is registered, and not after it is gone', async () => {
  expect(tracerRegistered()).toBe(false);
  expect((await create('before-tracing')).statusCode).toBe(201);

  const exporter = new InMemorySpanExporter();
  const sdk = new NodeSDK({ spanProcessors: [new SimpleSpanProcessor(exporter)], instrumentations: [] });
  sdk.start();
  try {
    expect(tracerRegistered()).toBe(true);
    expect((await create('while-tracing')).statusCode).toBe(201);
    // The server span ends in onResponse, once the answer has gone out.
    const server = await vi.waitFor(() => {
      const spans = exporter.getFinishedSpans().filter((span) => span.name === 'POST /v1/checkpoints');
      expect(spans).toHaveLength(1);
      return spans;
    });
    expect(server[0]!.spanContext().traceId).toBe(TRACE);
    expect(server[0]!.attributes['gen_ai.conversation.id']).toBe('while-tracing');
  } finally {
    await sdk.shutdown();
    trace.disable();
  }
  expect(tracerRegistered()).toBe(false);
  expect((await create('after-tracing')).statusCode).toBe(201);
});
