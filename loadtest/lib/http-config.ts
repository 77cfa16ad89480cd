/**
 * The HTTP benchmark's settings: its environment knobs (documented in
 * `http-bench.ts` and the README) and the fixed sizes of its data set. The
 * only place the HTTP benchmark reads `process.env` for its own settings.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { envNumber } from './env.js';

export const SECONDS = envNumber('BENCH_SECONDS', 8, false);
export const WARMUP_SECONDS = envNumber('BENCH_WARMUP_SECONDS', Math.min(2, SECONDS / 4), false);
export const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 100, true);
export const OPEN_CREATES = envNumber('BENCH_OPEN_CREATES', 500, false);
export const OPEN_READS = envNumber('BENCH_OPEN_READS', 2000, false);
export const RATE_LIMIT = envNumber('BENCH_RATE_LIMIT_PER_MINUTE', 1_000_000_000, true);
/** Agents handing off at once in the handoff scenario, each on its own task. */
export const HANDOFF_WORKERS = envNumber('BENCH_HANDOFF_WORKERS', 20, true);
/** Writers creating checkpoints of one task at once in the contention scenario. */
export const CONTENTION_WRITERS = envNumber('BENCH_CONTENTION_WRITERS', 32, true);
export const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR || undefined;

export const OPEN_TASKS = 1000;
export const GET_CHECKPOINTS = 2000;
export const HISTORY_TASKS = 5;
export const HISTORY_PER_TASK = 120;
export const HISTORY_LIMIT = 100;
/** Checkpoints the PATCH scenario cycles through: one per connection, and spares. */
export const PATCH_CHECKPOINTS = CONNECTIONS + 50;
export const PREP_CONCURRENCY = 32;

/** The writer token Baton is started with, fresh for each run. */
export const TOKEN = randomBytes(24).toString('base64url'); // 32 characters
/** The admin token of the run: the queue scenario sets store faults with it. */
export const ADMIN_TOKEN = randomBytes(24).toString('base64url');
/** Room in the write queue for the queue scenario's writes (its default, 64 MiB, would fill in a few seconds). */
export const QUEUE_MAX_BYTES = 4 * 1024 ** 3;
