/**
 * The service as deployed exports its traces by the standard variables
 * alone: started as `npm start` starts it, with OTEL_EXPORTER_OTLP_ENDPOINT
 * pointing at an OTLP/HTTP receiver this test runs on a socket and
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json, a request's spans arrive there in
 * the caller's trace, named for the service.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, checkpointBody } from '../support/app.js';
import { removeDir, startBaton, stopBaton, tempDataDir, type RunningServer } from '../support/crash-server.js';

const TRACE = '5b8efff798038103d269b633813fc60c';
const received: { path: string; body: string }[] = [];
let receiver: Server;
let endpoint: string;
let baton: RunningServer;
const dir = tempDataDir('baton-otlp-');

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body });
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  baton = await startBaton(dir, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'baton-test', OTEL_BSP_SCHEDULE_DELAY: '100' });
});
afterAll(async () => {
  await stopBaton(baton?.child);
  await new Promise((resolve) => receiver.close(resolve));
  removeDir(dir);
});

describe('OTLP export configured by OTEL_* variables', () => {
  it('sends a request’s spans, in the caller’s trace, to the receiver as OTLP/HTTP JSON', async () => {
    const res = await fetch(`${baton.url}/v1/checkpoints`, {
      method: 'POST',
      headers: { ...auth('writer'), 'content-type': 'application/json', traceparent: `00-${TRACE}-a2fb4a1d1a96d312-01` },
      body: JSON.stringify(checkpointBody('exported-task')),
    });
    expect(res.status).toBe(201);
    const deadline = Date.now() + 10_000;
    while (!received.some((r) => r.body.includes(TRACE)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const batch = received.find((r) => r.body.includes(TRACE));
    expect(batch?.path).toBe('/v1/traces');
    const payload = JSON.parse(batch!.body) as { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { traceId: string; name: string }[] }[] }[] };
    const service = payload.resourceSpans[0]!.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
    expect(service).toBe('baton-test');
    const spans = payload.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)).filter((s) => s.traceId === TRACE);
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['POST /v1/checkpoints', 'baton.store.transaction']));
  });
});
