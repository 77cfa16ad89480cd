/**
 * The live event stream over a real socket (DESIGN §3: GET /v1/events with
 * `Accept: text/event-stream` is a live SSE stream that resumes from
 * `Last-Event-ID`).
 *
 * Frames arrive in commit order with strictly increasing ids; a client that
 * disconnects and reconnects with the last id it saw gets exactly the events
 * after it (checked against the JSON listing), none repeated and none
 * skipped; `types` filters the stream; a stream without a cursor starts at
 * the present.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../../support/app.js';

interface Frame {
  id: string;
  event: string;
  data: { id: string; type: string; subject: string; specversion: string; data: Record<string, unknown> };
}

/** How long to wait for frames that should come, and to be sure that no more come. */
const WAIT_MS = 5_000;
const QUIET_MS = 400;

/** A minimal SSE client over fetch: parses frames (id, event, data) and comments as they arrive. */
class SseClient {
  readonly frames: Frame[] = [];
  readonly comments: string[] = [];
  status = 0;
  contentType = '';
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;
  private error: unknown;
  private notify: (() => void) | undefined;

  constructor(url: string, headers: Record<string, string>) {
    this.done = this.run(url, headers).catch((error: unknown) => {
      if (!this.abort.signal.aborted) this.error = error;
    });
  }

  private async run(url: string, headers: Record<string, string>): Promise<void> {
    const res = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: this.abort.signal });
    this.status = res.status;
    this.contentType = res.headers.get('content-type') ?? '';
    this.wake();
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = res.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        this.parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  }

  private parse(block: string): void {
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0) this.frames.push({ id: id ?? '', event, data: JSON.parse(data.join('\n')) as Frame['data'] });
    this.wake();
  }

  private wake(): void {
    this.notify?.();
  }

  /** Resolves once `ready()` holds; fails after `timeoutMs` with what arrived. */
  async until(ready: () => boolean, what: string, timeoutMs = WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      if (this.error) throw this.error;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`Timed out waiting for ${what}; got ${this.frames.length} frames: ${this.frames.map((f) => `${f.event}@${f.id}`).join(', ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50));
        this.notify = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.notify = undefined;
    }
  }

  connected(): Promise<void> {
    return this.until(() => this.comments.includes('connected'), 'the ": connected" comment');
  }

  frameCount(n: number): Promise<void> {
    return this.until(() => this.frames.length >= n, `${n} frames`);
  }

  /** Waits `ms` and asserts nothing more arrived. */
  async quiet(expected: number, ms = QUIET_MS): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    expect(this.frames.map((f) => `${f.event}@${f.id}`)).toHaveLength(expected);
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}

const CURSOR = /^[0-9a-f]{24}$/;

function expectIncreasing(ids: string[]): void {
  for (const id of ids) expect(id).toMatch(CURSOR);
  for (let i = 1; i < ids.length; i++) expect(BigInt(`0x${ids[i]}`) > BigInt(`0x${ids[i - 1]}`), `${ids[i]} after ${ids[i - 1]}`).toBe(true);
}

describe('GET /v1/events as a live SSE stream, over a real socket', () => {
  let t: TestApp;
  let base = '';
  const clients: SseClient[] = [];

  const open = (query = '', headers: Record<string, string> = {}): SseClient => {
    const client = new SseClient(`${base}/v1/events${query}`, { ...auth(), ...headers });
    clients.push(client);
    return client;
  };

  const create = async (taskId: string): Promise<string> => {
    const res = await fetch(`${base}/v1/checkpoints`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify(checkpointBody(taskId)),
      signal: AbortSignal.timeout(WAIT_MS),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };

  const patch = async (id: string, version: number, body: Record<string, unknown>): Promise<void> => {
    const res = await fetch(`${base}/v1/checkpoints/${id}`, {
      method: 'PATCH',
      headers: { ...auth(), 'content-type': 'application/merge-patch+json', 'if-match': `"${version}"` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(WAIT_MS),
    });
    expect(res.status).toBe(200);
  };

  /** The JSON listing of events after `after` (every page). */
  const listed = async (after?: string, types?: string): Promise<{ cursor: string; type: string; subject: string; id: string }[]> => {
    const items: { cursor: string; type: string; subject: string; id: string }[] = [];
    let cursor = after;
    for (let page = 0; page < 100; page++) {
      const query = new URLSearchParams({ limit: '1000', ...(cursor ? { after: cursor } : {}), ...(types ? { types } : {}) });
      const res = await fetch(`${base}/v1/events?${query}`, { headers: { ...auth(), accept: 'application/json' } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { items: { cursor: string; type: string; subject: string; id: string }[]; nextCursor?: string };
      items.push(...body.items);
      if (!body.nextCursor) break;
      cursor = body.nextCursor;
    }
    return items;
  };

  const latestCursor = async (): Promise<string | undefined> => (await listed()).at(-1)?.cursor;

  beforeAll(async () => {
    t = await buildTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    // fetch (undici) opens a spare connection beside a streaming one and never sends a request on it;
    // the server would keep it until undici's 4 s keep-alive ends. Every stream is closed by now.
    t?.app.server.closeAllConnections();
    await t?.close();
  });

  it('a stream without a cursor starts at the present: old events are not replayed', async () => {
    const old = [await create('sse-old'), await create('sse-old')];
    const stream = open();
    await stream.connected();
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    await stream.quiet(0);

    const fresh = await create('sse-present');
    await stream.frameCount(1);
    await stream.quiet(1);
    expect(stream.frames[0]!.event).toBe('CHECKPOINT_CREATED');
    expect(stream.frames[0]!.data.subject).toBe(fresh);
    expect(stream.frames.map((f) => f.data.subject)).not.toContain(old[0]);
  });

  it('N creations while connected → N CHECKPOINT_CREATED frames, in order, with strictly increasing ids', async () => {
    const stream = open();
    await stream.connected();
    const N = 12;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push(await create(`sse-order-${i % 3}`));
    await stream.frameCount(N);
    await stream.quiet(N);

    expect(stream.frames.map((f) => f.event)).toEqual(Array(N).fill('CHECKPOINT_CREATED'));
    expect(stream.frames.map((f) => f.data.subject)).toEqual(ids);
    expectIncreasing(stream.frames.map((f) => f.id));
    for (const frame of stream.frames) {
      // The frame's data is the CloudEvent; its `event` field is the event's type.
      expect(frame.data).toMatchObject({ specversion: '1.0', type: frame.event, subject: frame.data.subject });
      expect(frame.data.data).toMatchObject({ checkpointId: frame.data.subject, version: 1 });
      expect(frame.data).not.toHaveProperty('cursor');
    }
    // The frames are the JSON listing's events, cursor for cursor.
    const first = stream.frames[0]!.id;
    const before = (await listed()).findIndex((e) => e.cursor === first);
    expect(before).toBeGreaterThanOrEqual(0);
    const page = (await listed()).slice(before, before + N);
    expect(stream.frames.map((f) => [f.id, f.data.id])).toEqual(page.map((e) => [e.cursor, e.id]));
  });

  it('reconnecting with Last-Event-ID resumes exactly after the last event seen: none repeated, none skipped', async () => {
    const first = open();
    await first.connected();
    const createdFirst = [await create('sse-resume'), await create('sse-resume'), await create('sse-resume'), await create('sse-resume'), await create('sse-resume'), await create('sse-resume')];
    const k = 3;
    await first.frameCount(k);
    const seen = first.frames.slice(0, k);
    const lastSeen = seen[k - 1]!.id;
    await first.close();

    // Written while the client is away.
    const whileAway = [await create('sse-resume'), await create('sse-resume-2'), await create('sse-resume'), await create('sse-resume-2')];
    const expected = await listed(lastSeen);
    expect(expected.length).toBe(createdFirst.length - k + whileAway.length);

    const second = open('', { 'last-event-id': lastSeen });
    await second.frameCount(expected.length);
    await second.quiet(expected.length);

    const got = second.frames.map((f) => f.id);
    expect(got).toEqual(expected.map((e) => e.cursor));
    expect(new Set(got).size).toBe(got.length);
    expect(got).not.toContain(lastSeen);
    for (const frame of seen) expect(got).not.toContain(frame.id);
    expectIncreasing([lastSeen, ...got]);
    // Together, the two connections saw every creation exactly once, in order.
    expect([...seen, ...second.frames].map((f) => f.data.subject)).toEqual([...createdFirst, ...whileAway]);

    // And the resumed stream stays live.
    const later = await create('sse-resume');
    await second.frameCount(expected.length + 1);
    expect(second.frames.at(-1)!.data.subject).toBe(later);
    await second.quiet(expected.length + 1);
  });

  it('the ?after= query resumes the same way as Last-Event-ID', async () => {
    const mark = await latestCursor();
    expect(mark).toBeDefined();
    const a = await create('sse-after');
    const b = await create('sse-after');
    const stream = open(`?after=${mark}`);
    await stream.frameCount(2);
    await stream.quiet(2);
    expect(stream.frames.map((f) => f.data.subject)).toEqual([a, b]);
  });

  it('types=CHECKPOINT_UPDATED streams only updates', async () => {
    const mark = await latestCursor();
    const stream = open('?types=CHECKPOINT_UPDATED');
    await stream.connected();
    const id = await create('sse-types');
    await patch(id, 1, { executionState: { phase: 'testing' } });
    await patch(id, 2, { executionState: { phase: 'reviewing' } });
    const res = await fetch(`${base}/v1/checkpoints/${id}/finalize`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'completed' }),
    });
    expect(res.status).toBe(200);
    const other = await create('sse-types');
    await patch(other, 1, { labels: { x: 1 } });

    await stream.frameCount(3);
    await stream.quiet(3);
    expect(stream.frames.map((f) => f.event)).toEqual(['CHECKPOINT_UPDATED', 'CHECKPOINT_UPDATED', 'CHECKPOINT_UPDATED']);
    expect(stream.frames.map((f) => [f.data.subject, f.data.data.version])).toEqual([
      [id, 2],
      [id, 3],
      [other, 2],
    ]);
    expectIncreasing(stream.frames.map((f) => f.id));
    // The same events as the filtered JSON listing.
    expect(stream.frames.map((f) => f.id)).toEqual((await listed(mark, 'CHECKPOINT_UPDATED')).map((e) => e.cursor));

    // A filtered stream resumed from Last-Event-ID also keeps to its filter.
    const resumed = open('?types=CHECKPOINT_UPDATED', { 'last-event-id': stream.frames[0]!.id });
    await resumed.frameCount(2);
    await resumed.quiet(2);
    expect(resumed.frames.map((f) => f.id)).toEqual(stream.frames.slice(1).map((f) => f.id));
  });

  it('refuses a Last-Event-ID it did not issue, and an unknown type, as problems before streaming', async () => {
    for (const [query, headers, code] of [
      ['', { 'last-event-id': 'not-a-cursor' }, 'invalid_cursor'],
      ['?types=NOPE', {}, 'validation_failed'],
    ] as const) {
      const res = await fetch(`${base}/v1/events${query}`, { headers: { ...auth(), ...headers, accept: 'text/event-stream' }, signal: AbortSignal.timeout(WAIT_MS) });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toMatchObject({ code });
    }
  });
});
