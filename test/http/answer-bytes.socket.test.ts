/**
 * Answers that carry stored checkpoints, over a real socket: each is the
 * stored canonical text with the hash put into it (`CheckpointDoc.json`),
 * joined into lists and envelopes as text, so what a client checks is that
 * the bytes are the JSON it expects, whole, with a Content-Length that
 * counts bytes, not characters, when the text holds characters outside
 * ASCII before and after the hash put into it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../support/app.js';

let current: TestApp | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

/** Non-ASCII before `compliance` (agentId, agentType) and after it (the text), of one, two, three and four UTF-8 bytes. */
function body(taskId: string): Record<string, unknown> {
  return checkpointBody(taskId, {
    agentId: 'agent-é',
    agentType: 'büilder-€',
    recovery: { continuationPrompt: 'Weiter mit p1 — 𝄞 ✓ “quoted”' },
    labels: { team: 'コア' },
  });
}

interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  json: Record<string, unknown>;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { ...init, headers: { ...auth('admin'), 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, json: JSON.parse(bytes.toString('utf8')) as Record<string, unknown> };
}

function expectWhole(answer: Answer): void {
  expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(Number(answer.headers.get('content-length'))).toBe(answer.bytes.length);
  // Valid UTF-8 throughout: decoding and encoding again gives the same bytes.
  expect(Buffer.from(answer.bytes.toString('utf8'), 'utf8').equals(answer.bytes)).toBe(true);
}

describe('answers holding stored checkpoints', () => {
  it('a create, a read, a history page and a handoff answer the same checkpoint as whole UTF-8 JSON with a byte-counted Content-Length', async () => {
    current = await buildTestApp();
    const base = await current.app.listen({ port: 0, host: '127.0.0.1' });

    const created = await call(`${base}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(body('bytes-task')) });
    expect(created.status).toBe(201);
    expectWhole(created);
    expect(created.json).toMatchObject({ agentId: 'agent-é', agentType: 'büilder-€', labels: { team: 'コア' } });
    expect((created.json.recovery as Record<string, unknown>).continuationPrompt).toBe('Weiter mit p1 — 𝄞 ✓ “quoted”');
    const hash = (created.json.compliance as Record<string, unknown>).hash;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);

    const read = await call(`${base}/v1/checkpoints/${String(created.json.id)}`);
    expect(read.status).toBe(200);
    expectWhole(read);
    expect(read.json).toEqual(created.json);

    const second = await call(`${base}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(body('bytes-task')) });
    const page = await call(`${base}/v1/tasks/bytes-task/checkpoints?limit=10`);
    expect(page.status).toBe(200);
    expectWhole(page);
    expect(page.json.items).toEqual([second.json, created.json]);

    const handoff = await call(`${base}/v1/checkpoints/${String(second.json.id)}/handoff`, { method: 'POST', body: JSON.stringify({ trigger: 'context_limit', note: 'Kontext voll — ✓' }) });
    expect(handoff.status).toBe(201);
    expectWhole(handoff);
    // The handoff finalizes the checkpoint: its next version, the same text.
    expect(handoff.json.checkpoint).toMatchObject({ id: second.json.id, version: 2, agentId: 'agent-é', labels: { team: 'コア' }, compliance: { hash: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(handoff.json.handoff).toMatchObject({ checkpointId: second.json.id, trigger: 'context_limit' });
  });

  it('a history page past 64 K characters (sent as bytes, not text) is whole UTF-8 JSON with its cursor, each item as read alone', async () => {
    current = await buildTestApp();
    const base = await current.app.listen({ port: 0, host: '127.0.0.1' });
    const created: Record<string, unknown>[] = [];
    for (let i = 0; i < 30; i++) {
      const long = body('bytes-long');
      (long.recovery as Record<string, unknown>).continuationPrompt = `${i} ${'Weiter — 𝄞 ✓ コア é '.repeat(200)}`;
      const answer = await call(`${base}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(long) });
      expect(answer.status).toBe(201);
      created.unshift(answer.json);
    }
    const page = await call(`${base}/v1/tasks/bytes-long/checkpoints?limit=25`);
    expect(page.status).toBe(200);
    expectWhole(page);
    expect(page.bytes.toString('utf8').length).toBeGreaterThan(64 * 1024);
    expect(page.json.items).toEqual(created.slice(0, 25));
    expect(typeof page.json.nextCursor).toBe('string');
    const rest = await call(`${base}/v1/tasks/bytes-long/checkpoints?limit=25&cursor=${encodeURIComponent(String(page.json.nextCursor))}`);
    expectWhole(rest);
    expect(rest.json.items).toEqual(created.slice(25));
    expect(rest.json.nextCursor).toBeUndefined();
  });

  it('a checkpoint read while its write is queued is answered whole, marked queued', async () => {
    current = await buildTestApp({ config: { queueReplayMs: 60_000 }, app: { faultInjection: true } });
    const base = await current.app.listen({ port: 0, host: '127.0.0.1' });
    const faults = await call(`${base}/v1/admin/faults`, { method: 'POST', body: JSON.stringify({ store: 'unavailable' }) });
    expect(faults.status).toBe(200);

    const queued = await call(`${base}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(body('bytes-queued')) });
    expect(queued.status).toBe(202);
    expectWhole(queued);
    const checkpoint = queued.json.checkpoint as Record<string, unknown>;
    expect(checkpoint).toMatchObject({ agentId: 'agent-é', labels: { team: 'コア' } });

    const read = await call(`${base}/v1/checkpoints/${String(queued.json.checkpointId)}`);
    expect(read.status).toBe(200);
    expectWhole(read);
    expect(read.json).toEqual({ queued: true, ...checkpoint });
  });
});
