/**
 * The retry waits, as pure functions: full jitter under a doubling cap that
 * stops at `maxMs`, and Retry-After read as seconds or as an HTTP-date.
 */
import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter } from '../../src/client/retry.js';

const policy = { baseMs: 100, maxMs: 1_000, maxRetryAfterMs: 60_000 };

describe('backoff with full jitter', () => {
  it('waits between zero and a cap that doubles with each retry and stops at maxMs', () => {
    const highest = (attempt: number): number => backoffDelay(attempt, policy, () => 0.999_999);
    expect([0, 1, 2, 3, 4, 10, 100].map(highest)).toEqual([99, 199, 399, 799, 999, 999, 999]);
    for (const attempt of [0, 3, 50]) expect(backoffDelay(attempt, policy, () => 0)).toBe(0);
  });

  it('spreads the waits of clients that failed together over the whole range', () => {
    const waits = Array.from({ length: 2_000 }, () => backoffDelay(3, policy));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...waits)).toBeLessThan(800);
    // Full jitter, not "cap plus a little": a quarter of the waits fall in each quarter of the range.
    const quarters = [0, 0, 0, 0];
    for (const wait of waits) quarters[Math.floor(wait / 200)]! += 1;
    for (const count of quarters) expect(count).toBeGreaterThan(350);
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP-dates; ignores what it cannot read', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
  });
});
