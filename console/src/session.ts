/**
 * The user's token and the calls made with it. The token is typed into the
 * page, kept in this tab's session storage (gone when the tab closes, never
 * shared with other tabs), and sent only as `Authorization: Bearer`; no URL
 * ever carries it. Every call goes to the public HTTP API of the origin that
 * served the page, through the typed client (`baton/client`).
 *
 * @module
 */
import { BatonClient } from '../../src/client/client.js';
import { BatonError } from '../../src/client/errors.js';

const KEY = 'baton.console.token';

export function storedToken(): string | undefined {
  try {
    return sessionStorage.getItem(KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function storeToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when the service refuses the token (401): the page asks for another. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export type StreamState = 'connecting' | 'live' | 'lost';
const streamListeners = new Set<(state: StreamState) => void>();

/** Follows the live event stream's connection: each new connection, its answer, and its end. */
export function onStreamState(listener: (state: StreamState) => void): () => void {
  streamListeners.add(listener);
  return () => streamListeners.delete(listener);
}

const announce = (state: StreamState): void => streamListeners.forEach((listener) => listener(state));

/** A body that reports when it ends, however it ends (closed, broken, or cancelled by the reader). */
function watched(body: ReadableStream<Uint8Array>, onEnd: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          onEnd();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        onEnd();
        controller.error(error);
      }
    },
    cancel(reason) {
      onEnd();
      return reader.cancel(reason);
    },
  });
}

/** The newest stream connection: only it speaks for the stream's state; one being replaced ends quietly. */
let newestStream = 0;

async function consoleFetch(input: string, init: RequestInit): Promise<Response> {
  const stream = new Headers(init.headers).get('accept') === 'text/event-stream';
  const connection = stream ? ++newestStream : 0;
  const report = (state: StreamState): void => {
    if (stream && connection === newestStream) announce(state);
  };
  report('connecting');
  let response: Response;
  try {
    response = await fetch(input, init);
  } catch (error) {
    report('lost');
    throw error;
  }
  if (response.status === 401) unauthorizedListeners.forEach((listener) => listener());
  if (!stream) return response;
  if (!response.ok || response.body === null) {
    report('lost');
    return response;
  }
  report('live');
  return new Response(watched(response.body, () => report('lost')), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The typed client over this origin with the stored token; one retry, so a refusal shows at once. */
export const client = new BatonClient({
  baseUrl: location.origin,
  token: () => storedToken() ?? '',
  fetch: consoleFetch,
  retries: 1,
  backoff: { baseMs: 250, maxMs: 4_000 },
});

/**
 * A GET the typed client does not offer (public keys, the evidence bundle):
 * the answer as it came, or a `BatonError` with the service's problem.
 */
export async function getRaw(path: string, accept: string): Promise<Response> {
  const response = await consoleFetch(`${location.origin}${path}`, { headers: { accept, authorization: `Bearer ${storedToken() ?? ''}` } });
  if (response.ok) return response;
  const text = await response.text();
  try {
    const problem = JSON.parse(text) as ConstructorParameters<typeof BatonError>[0];
    if (typeof problem.code === 'string') throw new BatonError(problem);
  } catch (error) {
    if (error instanceof BatonError) throw error;
  }
  throw new BatonError({ type: 'about:blank', title: 'Unexpected response', status: response.status, code: 'unexpected_response', detail: `The service answered ${response.status}.` });
}
