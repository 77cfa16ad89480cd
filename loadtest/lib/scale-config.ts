/**
 * The growth benchmark's settings: its environment knobs (documented in
 * `scale-bench.ts` and the README) and the fixed sizes of its runs. The
 * closed-loop knobs it shares with the HTTP benchmark (BENCH_SECONDS,
 * BENCH_CONNECTIONS, the token) are read in `http-config.ts`.
 *
 * @module
 */
import { envNumber } from './env.js';

export const SCALE_CHECKPOINTS = envNumber('BENCH_SCALE_CHECKPOINTS', 1_000_000, true);
export const SCALE_TASKS = envNumber('BENCH_SCALE_TASKS', 10_000, true);
/** Measured requests per read figure, after READ_WARMUP discarded ones. */
export const READS = envNumber('BENCH_SCALE_READS', 400, true);
const flag = (name: string): boolean => (process.env[name] ?? '') !== '' && process.env[name] !== '0';
/** Keep the loaded directory at the end and print its path, for BENCH_SCALE_DATA_DIR. */
export const KEEP_DIR = flag('BENCH_SCALE_KEEP_DIR');
/** An already loaded directory (kept by an earlier run): the load is skipped and the directory is left in place. */
export const REUSE_DIR = process.env.BENCH_SCALE_DATA_DIR || undefined;

/** The empty store's seed: enough tasks of more than HISTORY_LIMIT checkpoints for the read figures. */
export const SEED_TASKS = 10;
export const SEED_CHECKPOINTS = 1_200;

/** Creates in flight during the load: LMDB commits all that are queued in one event turn with one fsync. */
export const LOAD_IN_FLIGHT = 256;
export const PROGRESS_EVERY = 50_000;

export const READ_WARMUP = 20;
export const SEARCH_LIMIT = 20;

/** What the issue asks of a loaded store against an empty one (loaded/empty). */
export const TARGETS = {
  /** Create rate and history(100) p50 stay within this factor of the empty store's. */
  growth: 1.2,
  /** Every search p50 on the loaded store, in ms. */
  searchP50Ms: 20,
  /** Bytes on disk per checkpoint over its canonical JSON size. */
  diskOverCanonical: 3,
};
