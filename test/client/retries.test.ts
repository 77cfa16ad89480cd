/**
 * Retries over a real socket, through a proxy that loses connections and
 * answers in the server's place: network errors, 429 and 5xx are retried
 * with the Idempotency-Key minted once for the logical call, so a write
 * whose answer was lost is applied once; 4xx is never retried; Retry-After
 * is honoured; aborting stops the retries.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BatonError, type BatonClient } from '../../src/client/index.js';
import { problemAnswer, ScriptedProxy } from './support/proxy.js';
import { listen, work, type Listening } from './support/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('client retries, over a real socket', () => {
  let server: Listening;
  let proxy: ScriptedProxy;
  let client: BatonClient;
  let direct: BatonClient;
  let n = 0;
  let taskId = '';

  beforeAll(async () => {
    server = await listen();
    direct = server.client();
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(async () => {
    proxy = await ScriptedProxy.start(server.url);
    client = server.client({ baseUrl: proxy.url, retries: 3 });
    taskId = `retry-task-${++n}`;
  });
  afterEach(async () => {
    await proxy.close();
  });

  /** The Idempotency-Keys the proxy saw on creates. */
  const createKeys = (): (string | string[] | undefined)[] => proxy.requests('POST', '/v1/checkpoints').map((s) => s.headers['idempotency-key']);

  /** The task's checkpoints and CHECKPOINT_CREATED events, read directly from the server. */
  const applied = async (): Promise<{ checkpoints: string[]; created: number }> => {
    const history = await direct.checkpoints.history(taskId);
    const events = await direct.events.page({ types: ['CHECKPOINT_CREATED'], limit: 1000 });
    return { checkpoints: history.items.map((c) => c.id), created: events.items.filter((e) => e.data.taskId === taskId).length };
  };

  it('a create whose answer is lost is sent again with the same Idempotency-Key and applied once', async () => {
    proxy.script('drop-answer');
    const created = await client.checkpoints.create(work(taskId, 'agent-1'));

    const keys = createKeys();
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(UUID);
    expect(keys[1]).toBe(keys[0]);
    // The retry got the first answer: the checkpoint the lost answer described, and no second one.
    expect(await applied()).toEqual({ checkpoints: [created.id], created: 1 });
  });

  it('a connection dropped before the server saw the request is retried, applied once', async () => {
    proxy.script('drop');
    const created = await client.checkpoints.create(work(taskId, 'agent-1'));
    const keys = createKeys();
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(await applied()).toEqual({ checkpoints: [created.id], created: 1 });
  });

  it('429 and 5xx are retried with the same key; each logical call has its own key', async () => {
    proxy.script(problemAnswer(429, 'rate_limited'), problemAnswer(503, 'store_unavailable'), problemAnswer(502, 'internal_error'));
    const first = await client.checkpoints.create(work(taskId, 'agent-1'));
    const second = await client.checkpoints.create(work(taskId, 'agent-1'));

    const keys = createKeys();
    expect(keys).toHaveLength(5);
    expect(new Set(keys.slice(0, 4)).size).toBe(1);
    expect(keys[4]).toMatch(UUID);
    expect(keys[4]).not.toBe(keys[0]);
    expect((await applied()).checkpoints.sort()).toEqual([first.id, second.id].sort());
  });

  it('waits as long as Retry-After says before retrying', async () => {
    proxy.script(problemAnswer(503, 'store_unavailable', { 'retry-after': '1' }));
    const started = Date.now();
    await client.checkpoints.create(work(taskId, 'agent-1'));
    // The backoff alone would wait at most 50 ms; the second attempt came after the second the server asked for.
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(createKeys()).toHaveLength(2);
  });

  it('when the retries run out, the last problem is thrown and nothing was applied', async () => {
    const few = server.client({ baseUrl: proxy.url, retries: 2 });
    proxy.script(problemAnswer(503, 'store_unavailable'), problemAnswer(503, 'store_unavailable'), problemAnswer(503, 'store_unavailable'));
    const error = await few.checkpoints.create(work(taskId, 'agent-1')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BatonError);
    expect(error).toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(new Set(createKeys()).size).toBe(1);
    expect(createKeys()).toHaveLength(3);
    await expect(direct.checkpoints.history(taskId)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('a Retry-After longer than the client will wait ends the retries at once', async () => {
    proxy.script(problemAnswer(503, 'store_unavailable', { 'retry-after': '120' }));
    const started = Date.now();
    await expect(client.checkpoints.create(work(taskId, 'agent-1'))).rejects.toMatchObject({ status: 503 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(createKeys()).toHaveLength(1);
  });

  it('4xx answers are never retried', async () => {
    const holder = server.client();
    await holder.leases.acquire(taskId, { agentId: 'holder' });
    const created = await holder.checkpoints.create(work(taskId, 'holder'));
    const refusals: [string, () => Promise<unknown>, number, string][] = [
      ['POST /v1/checkpoints', () => client.checkpoints.create(work(taskId, 'other', { iteration: -1 })), 400, 'validation_failed'],
      ['GET /v1/checkpoints/:id', () => client.checkpoints.get('01890a5d-ac96-774b-bcce-b302099a8057'), 404, 'not_found'],
      ['POST /v1/tasks/:taskId/lease', () => client.leases.acquire(taskId, { agentId: 'other' }), 409, 'lease_held'],
      ['PATCH /v1/checkpoints/:id', () => client.checkpoints.patch(created.id, { labels: { x: 1 } }, { ifMatch: 1 }), 428, 'lease_required'],
    ];
    for (const [what, call, status, code] of refusals) {
      const before = proxy.seen.length;
      await expect(call(), what).rejects.toMatchObject({ status, code });
      expect(proxy.seen.length - before, what).toBe(1);
    }
  });

  it('reads are retried too, without an Idempotency-Key', async () => {
    const created = await direct.checkpoints.create(work(taskId, 'agent-1'));
    proxy.script('drop', problemAnswer(500, 'internal_error'));
    expect((await client.checkpoints.get(created.id)).id).toBe(created.id);
    const reads = proxy.requests('GET', `/v1/checkpoints/${created.id}`);
    expect(reads).toHaveLength(3);
    for (const read of reads) expect(read.headers['idempotency-key']).toBeUndefined();
  });

  it('aborting the call stops its retries and its wait', async () => {
    proxy.script(problemAnswer(503, 'store_unavailable', { 'retry-after': '30' }));
    const abort = new AbortController();
    const started = Date.now();
    const call = client.checkpoints.create(work(taskId, 'agent-1'), { signal: abort.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    abort.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(createKeys()).toHaveLength(1);
  });

  it('a caller-chosen Idempotency-Key is sent as is, and the server answers its repeat with the first answer', async () => {
    const key = `agent-1:${taskId}:step-1`;
    const first = await client.checkpoints.create(work(taskId, 'agent-1'), { idempotencyKey: key });
    // A second process (a restarted agent) sending the same call with the same key.
    const again = await server.client({ baseUrl: proxy.url }).checkpoints.create(work(taskId, 'agent-1'), { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    expect(createKeys()).toEqual([key, key]);
    expect(await applied()).toEqual({ checkpoints: [first.id], created: 1 });
  });
});
