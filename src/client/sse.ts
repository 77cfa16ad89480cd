/**
 * The live event feed as an async iterator: `GET /v1/events` with
 * `Accept: text/event-stream`, parsed as the HTML Living Standard's
 * "Server-sent events" says (fields, comments, CRLF, `id`, `retry`), and
 * reconnected after a dropped connection with `Last-Event-ID` set to the
 * last event handed to the caller. The service resumes exactly after that
 * event, so nothing is repeated or skipped across a reconnection.
 *
 * Like `EventSource`, it reconnects until told to stop: network errors,
 * 429, 5xx, a stream that ends, and a connection silent for longer than the
 * idle limit (the service sends a comment every 15 s) all lead to a new
 * connection after a backoff wait; other refusals (401, 400 for an unknown
 * cursor) end it with a `BatonError`. Aborting `signal`, or leaving a
 * `for await` loop, closes the connection and ends the iteration.
 *
 * @module
 */
import { BatonError, errorFromResponse, unexpected } from './errors.js';
import { backoffDelay, isRetriableStatus, parseRetryAfter, sleep, type BackoffPolicy } from './retry.js';
import type { Fetch } from './transport.js';
import type { EventType, StoredEvent } from './types.js';

export interface StreamOptions {
  types?: readonly EventType[];
  /** Start after this cursor (an event's `cursor`); without it the stream starts at the present. */
  after?: string;
  signal?: AbortSignal;
  /** Consecutive failed connections tolerated before the iterator throws; unbounded by default, as EventSource. */
  reconnects?: number;
  /** A connection that receives nothing for this long is presumed dead and replaced (ms). */
  idleTimeoutMs?: number;
}

export interface StreamContext {
  url: (query: Record<string, string | undefined>) => string;
  authorization: () => Promise<Record<string, string>>;
  fetch: Fetch;
  backoff: BackoffPolicy;
}

/** Three missed heartbeats of the service's 15 s. */
const DEFAULT_IDLE_MS = 45_000;

/** One dispatched frame: its `id` (the event's cursor) and its data. */
interface Frame {
  id: string | undefined;
  data: string;
}

export async function* eventStream(context: StreamContext, options: StreamOptions = {}): AsyncGenerator<StoredEvent, void, undefined> {
  const { signal } = options;
  const maxFailures = options.reconnects ?? Number.POSITIVE_INFINITY;
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_MS;
  let lastEventId = options.after;
  let failures = 0;
  // The stream's own `retry:` field: the reconnection time from then on, as EventSource keeps it.
  let reconnectMs: number | undefined;

  while (!signal?.aborted) {
    const connection = new AbortController();
    // The caller's abort reaches the connection through a listener that holds it, not `AbortSignal.any`:
    // the signal that makes is held weakly, and once collected an abort no longer reached the open
    // response, so the stream went on forever (seen under load, where the collection came first).
    const stop = (): void => connection.abort(signal?.reason);
    signal?.addEventListener('abort', stop, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const touch = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Error('The event stream was silent past its idle limit.')), idleMs);
    };
    let delivered = false;
    let failure: unknown;
    let retryAfter: number | undefined;
    try {
      touch();
      const headers: Record<string, string> = { accept: 'text/event-stream', 'cache-control': 'no-cache', ...(await context.authorization()) };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      const types = options.types && options.types.length > 0 ? options.types.join(',') : undefined;
      const response = await context.fetch(context.url({ types }), { method: 'GET', headers, signal: connection.signal, redirect: 'error' });
      if (!response.ok) {
        if (isRetriableStatus(response.status)) retryAfter = parseRetryAfter(response.headers.get('retry-after'));
        throw await errorFromResponse(response);
      }
      if (!/^text\/event-stream/i.test(response.headers.get('content-type') ?? '') || response.body === null) {
        await response.body?.cancel();
        throw unexpected(response.status, 'The service answered the event stream with another media type.');
      }
      for await (const frame of frames(response.body, connection.signal, touch, (ms) => (reconnectMs = ms))) {
        if (frame.id !== undefined) lastEventId = frame.id;
        if (frame.data === '') continue;
        const event = parseEvent(frame, lastEventId);
        delivered = true;
        failures = 0;
        yield event;
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof BatonError && !isRetriableStatus(error.status)) throw error;
      failure = error;
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener('abort', stop);
      connection.abort();
    }
    // Stopped by the caller: the read was cancelled, and the stream ends here.
    if (signal?.aborted) return;
    // The stream ended or broke: connect again after the last event delivered.
    if (!delivered) failures += 1;
    if (failures > maxFailures) throw failure ?? unexpected(200, 'The event stream kept ending without delivering an event.');
    try {
      await sleep(retryAfter ?? reconnectMs ?? backoffDelay(Math.max(0, failures - 1), context.backoff), signal);
    } catch {
      return;
    }
  }
}

function parseEvent(frame: Frame, cursor: string | undefined): StoredEvent {
  let event: unknown;
  try {
    event = JSON.parse(frame.data);
  } catch {
    throw unexpected(200, 'An event on the stream is not JSON.', frame.data);
  }
  if (cursor === undefined || typeof event !== 'object' || event === null) throw unexpected(200, 'An event on the stream has no id or is not an object.', frame.data);
  return { ...(event as Omit<StoredEvent, 'cursor'>), cursor };
}

/**
 * The frames of an event stream, as its bytes arrive; `touch` is called on
 * every chunk (comments included, so heartbeats keep the connection alive)
 * and `retry` with a `retry:` field's reconnection time. An unfinished frame
 * at the end of the stream is dropped, as the standard says, so its event is
 * delivered again after the reconnection.
 */
async function* frames(body: ReadableStream<Uint8Array>, signal: AbortSignal, touch: () => void, retry: (ms: number) => void): AsyncGenerator<Frame> {
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | undefined;
  let data: string[] = [];
  let sawCarriageReturn = false;
  // The connection's abort cancels the read here: fetch's own abort does not always reach a body already
  // streaming (once fetch's request is collected, its abort listener goes with it), and the stream then
  // read heartbeats forever after its caller had stopped it.
  const reader = body.getReader();
  const cancel = (): void => void reader.cancel(signal.reason).catch(() => undefined);
  if (signal.aborted) cancel();
  else signal.addEventListener('abort', cancel, { once: true });
  let ended = false;
  try {
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      yield* framesOf(chunk);
    }
    ended = true;
  } finally {
    signal.removeEventListener('abort', cancel);
    // Left before the end (the caller stopped reading, or a frame was bad): the response is not read on.
    if (!ended) cancel();
  }

  function* framesOf(chunk: Uint8Array): Generator<Frame> {
    touch();
    let text = decoder.decode(chunk, { stream: true });
    // A CRLF split across two chunks: its LF was already counted as the CR's line end.
    if (sawCarriageReturn && text.startsWith('\n')) text = text.slice(1);
    sawCarriageReturn = text.endsWith('\r');
    buffer += text;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop()!;
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0 || id !== undefined) yield { id, data: data.join('\n') };
        id = undefined;
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'id' && !value.includes('\0')) id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) retry(Number(value));
    }
  }
}
