/**
 * One trace across agents, over a real socket: agent A creates and hands
 * off with its `traceparent`; agent B acknowledges with its own. B's
 * acknowledgment span links to A's trace; the spans carry the GenAI
 * attributes; the AGENT_HANDOFF event carries A's trace context; the JSON log
 * line of the handoff has A's trace id, and no line has a token. The SDK runs
 * in this process with an in-memory exporter.
 */
import { Writable } from 'node:stream';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceLogger } from '../../src/server.js';
import { auth, buildTestApp, checkpointBody, TOKENS, type TestApp } from '../support/app.js';

const TRACE_A = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACE_B = '0af7651916cd43dd8448eb211c80319c';
const parent = (trace: string, span: string) => `00-${trace}-${span}-01`;

const exporter = new InMemorySpanExporter();
const sdk = new NodeSDK({ spanProcessors: [new SimpleSpanProcessor(exporter)], instrumentations: [] });
const lines: Record<string, unknown>[] = [];
let raw = '';
let t: TestApp;
let base: string;

beforeAll(async () => {
  sdk.start();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString();
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  t = await buildTestApp({ app: { logger: serviceLogger('info', sink) } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  t.app.server.closeAllConnections();
  await t.close();
  await sdk.shutdown();
});

async function post(path: string, body: unknown, traceparent: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { ...auth('writer'), 'content-type': 'application/json', traceparent }, body: JSON.stringify(body) });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

const serverSpans = (): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.kind === 1);

describe('a handoff traced across two agents', () => {
  let handoffId: string;
  let taskId: string;

  beforeAll(async () => {
    taskId = 'traced-task';
    const created = await post('/v1/checkpoints', checkpointBody(taskId, { agentId: 'agent-a', agentType: 'builder' }), parent(TRACE_A, '00f067aa0ba902b7'));
    const handed = await post(`/v1/checkpoints/${created.id}/handoff`, { trigger: 'context_limit', note: 'context is full' }, parent(TRACE_A, '53995c3f42cd8ad8'));
    handoffId = (handed.handoff as { id: string }).id;
    await post(`/v1/handoffs/${handoffId}/ack`, { agentId: 'agent-b', agentType: 'tester' }, parent(TRACE_B, 'b9c7c989f97918e1'));
  });

  it('continues each caller’s trace, and B’s acknowledgment links to A’s', () => {
    const handoff = serverSpans().find((s) => s.name === 'POST /v1/checkpoints/:id/handoff')!;
    const ack = serverSpans().find((s) => s.name === 'POST /v1/handoffs/:id/ack')!;
    expect(handoff.spanContext().traceId).toBe(TRACE_A);
    expect(handoff.parentSpanContext?.spanId).toBe('53995c3f42cd8ad8');
    expect(ack.spanContext().traceId).toBe(TRACE_B);
    expect(ack.links.map((link) => link.context.traceId)).toContain(TRACE_A);
    expect(ack.links.find((link) => link.context.traceId === TRACE_A)?.attributes).toMatchObject({ 'baton.link': 'handoff', 'baton.handoff.id': handoffId });
  });

  it('puts the GenAI conventions’ attributes on the spans', () => {
    const handoff = serverSpans().find((s) => s.name === 'POST /v1/checkpoints/:id/handoff')!;
    const ack = serverSpans().find((s) => s.name === 'POST /v1/handoffs/:id/ack')!;
    expect(handoff.attributes).toMatchObject({ 'gen_ai.conversation.id': taskId, 'baton.handoff.id': handoffId, 'http.response.status_code': 201 });
    expect(ack.attributes).toMatchObject({ 'gen_ai.conversation.id': taskId, 'gen_ai.agent.id': 'agent-b', 'gen_ai.agent.name': 'tester', 'baton.handoff.id': handoffId });
    const create = serverSpans().find((s) => s.name === 'POST /v1/checkpoints')!;
    expect(create.attributes).toMatchObject({ 'gen_ai.conversation.id': taskId, 'gen_ai.agent.id': 'agent-a', 'gen_ai.agent.name': 'builder', 'baton.checkpoint.id': expect.any(String) });
  });

  it('traces each store transaction as a child of its request', () => {
    const ack = serverSpans().find((s) => s.name === 'POST /v1/handoffs/:id/ack')!;
    const children = exporter.getFinishedSpans().filter((s) => s.parentSpanContext?.spanId === ack.spanContext().spanId);
    expect(children.map((s) => s.name)).toEqual(expect.arrayContaining(['baton.store.transaction', 'baton.store.read']));
    expect(children.find((s) => s.name === 'baton.store.transaction')!.attributes).toMatchObject({ 'db.system.name': 'lmdb' });
  });

  it('gives the AGENT_HANDOFF event A’s trace context (the CloudEvents tracing extension)', async () => {
    const res = await fetch(`${base}/v1/events?types=AGENT_HANDOFF`, { headers: auth('auditor') });
    const [event] = ((await res.json()) as { items: { traceparent?: string; subject: string }[] }).items;
    expect(event!.subject).toBe(handoffId);
    expect(event!.traceparent).toMatch(new RegExp(`^00-${TRACE_A}-[0-9a-f]{16}-01$`));
  });

  it('logs the handoff as one JSON line with A’s trace id, and never a token', () => {
    const line = lines.find((l) => l.msg === 'checkpoint changed' && l.action === 'handoff.initiated');
    expect(line).toMatchObject({ taskId, agentId: 'agent-a', trace_id: TRACE_A, span_id: expect.stringMatching(/^[0-9a-f]{16}$/), reqId: expect.any(String), checkpointId: expect.any(String) });
    expect(raw).not.toContain(TOKENS.writer);
    expect(raw).not.toContain(TOKENS.auditor);
  });
});
