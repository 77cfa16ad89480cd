/**
 * One logical call to the service, over as many attempts as it takes: the
 * URL, the token, the headers, the Idempotency-Key minted once per call and
 * sent with every attempt (the service answers a repeated key with its first
 * answer, so a retried write never applies twice), the retries with backoff,
 * a time limit per attempt, and the problem document of a refusal.
 *
 * @module
 */
import { BatonError, errorFromResponse, unexpected } from './errors.js';
import { backoffDelay, isRetriableStatus, parseRetryAfter, sleep, type BackoffPolicy } from './retry.js';

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  baseUrl: string;
  token?: string | (() => string | Promise<string>);
  fetch: Fetch;
  retries: number;
  backoff: BackoffPolicy;
  timeoutMs: number;
}

/** What every method accepts as its last argument. */
export interface CallOptions {
  /** Aborts the call, its retries and its waits. */
  signal?: AbortSignal;
  /**
   * The key of this logical write; a random UUID when absent. Pass your own
   * to make a write idempotent across processes (e.g. an agent restarted
   * mid-call sending the same key again).
   */
  idempotencyKey?: string;
  /** A W3C traceparent to send (a handoff stores it for the next agent's spans). */
  traceparent?: string;
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface Call {
  method: Method;
  /** From `/v1/…`, its variable parts already encoded. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  options?: CallOptions | undefined;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export class Transport {
  private readonly base: string;

  constructor(private readonly options: TransportOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
  }

  url(path: string, query?: Call['query']): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) params.append(name, String(value));
    const search = params.toString();
    return `${this.base}${path}${search ? `?${search}` : ''}`;
  }

  async authorization(): Promise<Record<string, string>> {
    const { token } = this.options;
    if (token === undefined) return {};
    return { authorization: `Bearer ${typeof token === 'function' ? await token() : token}` };
  }

  /** Sends `call` until it gets an answer worth returning; a non-2xx answer is thrown as a `BatonError`. */
  async send(call: Call): Promise<Answer> {
    const { retries, backoff, timeoutMs, fetch } = this.options;
    const signal = call.options?.signal;
    const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
    if (call.method !== 'GET') headers['idempotency-key'] = call.options?.idempotencyKey ?? crypto.randomUUID();
    if (call.options?.traceparent) headers.traceparent = call.options.traceparent;
    let body: string | undefined;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] = call.contentType ?? 'application/json';
    }
    const url = this.url(call.path, call.query);

    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const attemptSignal = signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
      let response: Response;
      let text: string;
      try {
        response = await fetch(url, { method: call.method, headers: { ...headers, ...(await this.authorization()) }, body, signal: attemptSignal, redirect: 'error' });
        if (response.ok) text = await response.text();
        else if (isRetriableStatus(response.status) && attempt < retries) text = await response.text();
        else throw await errorFromResponse(response);
      } catch (error) {
        if (error instanceof BatonError || signal?.aborted || attempt >= retries) throw error;
        // The request may or may not have reached the service; the same Idempotency-Key makes sending it again safe.
        await sleep(backoffDelay(attempt, backoff), signal);
        continue;
      }
      if (response.ok) return { status: response.status, headers: response.headers, text };
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      if (retryAfter !== undefined && retryAfter > backoff.maxRetryAfterMs) throw await problemOf(response, text);
      await sleep(retryAfter ?? backoffDelay(attempt, backoff), signal);
    }
  }

  /** Sends `call` and parses its JSON answer. */
  async json<T>(call: Call): Promise<T> {
    return parseAnswer<T>(await this.send(call));
  }
}

/** The JSON body of an answer. */
export function parseAnswer<T>(answer: Answer): T {
  try {
    return JSON.parse(answer.text) as T;
  } catch {
    throw unexpected(answer.status, 'The service answered with a body that is not JSON.', answer.text);
  }
}

/** The error of a retriable answer whose body was already read. */
async function problemOf(response: Response, text: string): Promise<BatonError> {
  return errorFromResponse(new Response(text, { status: response.status, headers: response.headers }));
}

/** Encodes one path segment (task ids are chosen by callers and may hold `/`, `?` or spaces). */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
