/**
 * When to try a request again and how long to wait: network errors, 429 and
 * 5xx are worth another try, other 4xx never are (the same request would get
 * the same refusal). Waits grow exponentially with full jitter (a random wait
 * between zero and the cap), so clients that failed together do not return
 * together; a `Retry-After` from the service is honoured instead.
 *
 * @module
 */

export interface BackoffPolicy {
  /** The cap of the first wait (ms); each retry doubles it. */
  baseMs: number;
  /** No wait is longer than this (ms). */
  maxMs: number;
  /** A Retry-After longer than this (ms) ends the retries: the caller decides whether to wait that long. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 5_000, maxRetryAfterMs: 60_000 };

/** Retries after the first attempt, unless the client is told otherwise. */
export const DEFAULT_RETRIES = 3;

export function isRetriableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** The wait before retry number `attempt + 1` (attempt 0 is the first retry): full jitter under an exponential cap. */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const cap = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * cap);
}

/**
 * A `Retry-After` header in milliseconds: delta-seconds or an HTTP-date
 * (RFC 9110 §10.2.3); undefined when absent or unreadable.
 */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // Every HTTP-date names a day or month; without letters, "-1" would parse as a date in year -1.
  const at = /[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
