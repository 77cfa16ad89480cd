/**
 * Latency statistics shared by the benchmarks: nearest-rank percentiles over
 * float milliseconds (not a bucketed histogram), and rounding for the figures
 * that go into tables and the `RESULT` line.
 *
 * @module
 */

/**
 * How long the HTTP benchmark's load generators wait for an answer (the
 * open loop's socket timeout, autocannon's `timeout`), and so the latency a
 * request without an answer counts as: the most any answered request can take.
 */
export const OVER_LIMIT_MS = 10_000;

/**
 * Answered latencies with one {@link OVER_LIMIT_MS} for each request that
 * errored or timed out: leaving them out would let a server that drops
 * requests under load look fast.
 */
export function withOverLimit(answered: number[], failed: number): number[] {
  return failed > 0 ? answered.concat(new Array<number>(failed).fill(OVER_LIMIT_MS)) : answered;
}

export interface Latency {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Nearest-rank percentile of ascending `sorted`. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** `value` rounded to `digits` decimals; NaN and infinities pass through. */
export function round(value: number, digits: number): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** p50, p99 and max of latency samples in ms, rounded to the microsecond; NaN when there are none. */
export function latencyOf(samples: number[]): Latency {
  const sorted = Float64Array.from(samples).sort();
  return {
    p50Ms: round(percentile(sorted, 0.5), 3),
    p99Ms: round(percentile(sorted, 0.99), 3),
    maxMs: round(sorted.length === 0 ? NaN : sorted[sorted.length - 1]!, 3),
  };
}
