/**
 * The storage benchmark's measurement: a number of loops each running one
 * operation back to back for a fixed time, with the latency of every
 * operation taken from `process.hrtime.bigint()`. A warm-up run comes first
 * and is discarded, so that JIT compilation and first page faults of a fresh
 * store do not count.
 *
 * @module
 */
import { latencyOf, round, type Latency } from './stats.js';

/** Latency (p50, p99, max) is per operation. */
export interface Figures extends Latency {
  concurrency: number;
  commits: number;
  seconds: number;
  commitsPerSec: number;
}

/** One operation; `loop` is the caller's loop number, `n` a number unique within the run. */
export type Op = (loop: number, n: number) => Promise<void>;

export interface Timing {
  warmupSeconds: number;
  seconds: number;
}

/** Runs `concurrency` loops of back-to-back `op` for `seconds`; latency per op from hrtime. */
async function runFor(op: Op, concurrency: number, seconds: number, counter: { n: number }): Promise<Figures> {
  const samples: number[] = [];
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  const loop = async (id: number): Promise<void> => {
    for (let t0 = process.hrtime.bigint(); t0 < end; t0 = process.hrtime.bigint()) {
      await op(id, counter.n++);
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, id) => loop(id)));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  return {
    concurrency,
    commits: samples.length,
    seconds: round(elapsed, 3),
    commitsPerSec: round(samples.length / elapsed, 1),
    ...latencyOf(samples),
  };
}

/** Warm-up (discarded), then the measured run. */
export async function measure(op: Op, concurrency: number, { warmupSeconds, seconds }: Timing): Promise<Figures> {
  const counter = { n: 0 };
  await runFor(op, concurrency, warmupSeconds, counter);
  return runFor(op, concurrency, seconds, counter);
}
