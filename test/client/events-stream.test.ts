/**
 * `client.events.stream` over a real socket, through a proxy that cuts the
 * connection mid-stream: the iterator reconnects with Last-Event-ID set to
 * the last event it handed over, and the events it yields across the cuts
 * are exactly the server's listing after the start — none repeated, none
 * skipped, in order. A refusal ends it; a dead-but-open connection is
 * replaced; leaving the loop closes the connection; aborting its signal ends
 * it even over a response that does not heed the abort itself (as fetch's
 * did not, now and then, once its request was collected).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BatonClient, BatonError, type StoredEvent, type StreamOptions } from '../../src/client/index.js';
import { Collector } from './support/collector.js';
import { problemAnswer, ScriptedProxy } from './support/proxy.js';
import { listen, until, work, type Listening } from './support/server.js';

describe('client.events.stream, over a real socket', () => {
  let server: Listening;
  let proxy: ScriptedProxy;
  let direct: BatonClient;
  let viaProxy: BatonClient;
  const collectors: Collector[] = [];

  beforeAll(async () => {
    server = await listen();
    direct = server.client();
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(async () => {
    proxy = await ScriptedProxy.start(server.url);
    viaProxy = server.client({ baseUrl: proxy.url });
  });
  afterEach(async () => {
    await Promise.all(collectors.splice(0).map((c) => c.stop()));
    await proxy.close();
  });

  const collect = (options: StreamOptions, client = viaProxy): Collector => {
    const collector = new Collector(client, options);
    collectors.push(collector);
    return collector;
  };

  /** The newest event's cursor now: where a test's stream starts. */
  const present = async (): Promise<string> => {
    const mark = await direct.checkpoints.create(work('stream-mark', 'marker'));
    const page = await direct.events.page({ types: ['CHECKPOINT_CREATED'], limit: 1000 });
    return page.items.find((e) => e.subject === mark.id)!.cursor;
  };

  /** Every event after `after`, from the JSON listing. */
  const listed = async (after: string, types?: StoredEvent['type'][]): Promise<StoredEvent[]> => {
    const items: StoredEvent[] = [];
    let cursor: string | undefined = after;
    while (cursor !== undefined) {
      const page = await direct.events.page({ after: cursor, limit: 1000, ...(types ? { types } : {}) });
      items.push(...page.items);
      cursor = page.nextCursor;
    }
    return items;
  };

  const streamRequests = () => proxy.requests('GET', '/v1/events');

  it('resumes after each cut with Last-Event-ID: the events yielded are the listing, none repeated, none skipped', async () => {
    const start = await present();
    const stream = collect({ after: start });
    const created: string[] = [];
    const create = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) created.push((await direct.checkpoints.create(work('stream-cut', 'agent-1'))).id);
    };

    await create(4);
    await stream.has(4, 'before the first cut');
    const beforeCut = stream.events.at(-1)!.cursor;
    // The reconnection's first attempt is refused with a 503, as a restarting server would; the next one goes through.
    proxy.script(problemAnswer(503, 'store_unavailable', { 'retry-after': '0' }));
    proxy.cut();
    await create(3);
    await stream.has(7, 'after the first cut');
    const beforeSecondCut = stream.events.at(-1)!.cursor;
    proxy.cut();
    await create(3);
    await stream.has(10, 'after the second cut');

    const expected = await listed(start);
    expect(expected).toHaveLength(10);
    expect(stream.events.map((e) => e.cursor)).toEqual(expected.map((e) => e.cursor));
    expect(stream.events.map((e) => e.id)).toEqual(expected.map((e) => e.id));
    expect(stream.events.map((e) => e.subject)).toEqual(created);
    expect(stream.events[0]).toMatchObject({ specversion: '1.0', type: 'CHECKPOINT_CREATED', data: { taskId: 'stream-cut' } });

    // Each connection asked for exactly what came after the last event handed over.
    const asked = streamRequests().map((r) => [r.headers['last-event-id'], typeof r.action === 'object' ? r.action.status : r.action]);
    expect(asked).toEqual([
      [start, 'forward'],
      [beforeCut, 503],
      [beforeCut, 'forward'],
      [beforeSecondCut, 'forward'],
    ]);
    expect(streamRequests()[0]!.headers.accept).toBe('text/event-stream');
  });

  it('a filtered stream keeps its filter across a reconnection', async () => {
    const start = await present();
    const stream = collect({ after: start, types: ['CHECKPOINT_UPDATED'] });
    const made = await direct.checkpoints.create(work('stream-types', 'agent-1'));
    await direct.checkpoints.patch(made.id, { labels: { step: 1 } }, { ifMatch: 1 });
    await stream.has(1, 'the first update');
    proxy.cut();
    await direct.checkpoints.patch(made.id, { labels: { step: 2 } }, { ifMatch: 2 });
    await direct.checkpoints.finalize(made.id, { status: 'completed' });
    await stream.has(2, 'the second update');

    const expected = await listed(start, ['CHECKPOINT_UPDATED']);
    expect(stream.events.map((e) => [e.type, e.data.version])).toEqual([
      ['CHECKPOINT_UPDATED', 2],
      ['CHECKPOINT_UPDATED', 3],
    ]);
    expect(stream.events.map((e) => e.cursor)).toEqual(expected.map((e) => e.cursor));
    expect(streamRequests().map((r) => new URL(r.url, 'http://x').searchParams.get('types'))).toEqual(['CHECKPOINT_UPDATED', 'CHECKPOINT_UPDATED']);
  });

  it('a connection that stays open but silent past the idle limit is replaced', async () => {
    const start = await present();
    proxy.script('stall');
    const stream = collect({ after: start, idleTimeoutMs: 300 });
    const made = await direct.checkpoints.create(work('stream-idle', 'agent-1'));
    await stream.has(1, 'the event after the stalled connection');
    expect(stream.events[0]!.subject).toBe(made.id);
    expect(streamRequests().map((r) => r.action)).toEqual(['stall', 'forward']);
  });

  it('a refusal ends the iteration with a BatonError, without reconnecting', async () => {
    const stream = collect({ after: 'not-a-cursor' });
    await stream.done;
    expect(stream.error).toBeInstanceOf(BatonError);
    expect(stream.error).toMatchObject({ status: 400, code: 'invalid_cursor' });
    expect(streamRequests()).toHaveLength(1);
  });

  it('leaving the loop closes the connection', async () => {
    const start = await present();
    await direct.checkpoints.create(work('stream-leave', 'agent-1'));
    for await (const event of viaProxy.events.stream({ after: start })) {
      expect(event.data.taskId).toBe('stream-leave');
      expect(proxy.openAnswers()).toBe(1);
      break;
    }
    await until(() => proxy.openAnswers() === 0, 'the stream was closed');
  });
});

describe('client.events.stream, stopped by its signal', () => {
  it('ends, and cancels the response, even when the response does not heed the abort itself', async () => {
    let cancelled = false;
    // A live feed that sends a heartbeat every 20 ms and never ends, whatever the request's signal says.
    const fetch = async (): Promise<Response> => {
      let timer: ReturnType<typeof setInterval> | undefined;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          timer = setInterval(() => controller.enqueue(new TextEncoder().encode(': heartbeat\n\n')), 20);
        },
        cancel() {
          cancelled = true;
          clearInterval(timer);
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    };
    const client = new BatonClient({ baseUrl: 'http://127.0.0.1:9', token: 'unused', fetch });
    const abort = new AbortController();
    const events: StoredEvent[] = [];
    const done = (async () => {
      for await (const event of client.events.stream({ signal: abort.signal })) events.push(event);
      return 'ended';
    })();
    await new Promise((resolve) => setTimeout(resolve, 100));
    abort.abort();
    const outcome = await Promise.race([done, new Promise((resolve) => setTimeout(() => resolve('still reading'), 2_000))]);
    expect(outcome).toBe('ended');
    expect(cancelled).toBe(true);
    expect(events).toEqual([]);
  });
});
