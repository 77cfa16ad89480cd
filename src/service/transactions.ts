/**
 * The transaction runner: the one caller of `store.transact` (the lint
 * refuses any other), and so the one retry policy, whatever the store.
 *
 * - A conflict (on FoundationDB, two writers of one task) is contention, not
 *   an outage: it is tried again with FoundationDB's own backoff (10 ms,
 *   doubling up to 1 s, jittered) until the deadline
 *   (`BATON_TRANSACTION_DEADLINE_MS`), and only then answered 503
 *   `task_contended`. A commit whose outcome is unknown is run again the same
 *   way: the operation record makes the rerun find the first result.
 * - An unreachable store is tried three more times with full jitter (20, 40,
 *   80 ms ceilings), so that a write soon goes to the local queue instead.
 * - Everything else is answered at once.
 *
 * Store errors end here: what leaves the runner is an {@link AppError}
 * (`store_unavailable`, `task_contended`, `payload_too_large`,
 * `insufficient_storage`, `internal_error`) whose `cause` is the store's error, counted in
 * `store_errors_total{code}` for every caller, sweepers included.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { context, SpanStatusCode, type Span } from '@opentelemetry/api';
import { tracer, type Traced } from '../telemetry/tracing.js';
import { AppError, type ErrorCode } from '../errors.js';
import { MissingKeyError } from '../crypto/keyring.js';
import type { FullDisk } from '../fs/free-space.js';
import type { Metrics } from '../metrics.js';
import { StoreError, type Store, type StoreErrorCode, type TransactionBody } from '../store/store.js';

/** Tries after the first while the store cannot be reached. */
export const OUTAGE_RETRIES = 3;
const OUTAGE_BASE_MS = 20;
/** FoundationDB's retry loop (`fdb_transaction_on_error`) starts at 10 ms and doubles to about 1 s. */
const CONTENTION_BASE_MS = 10;
const CONTENTION_MAX_MS = 1_000;

/** What the runner needs of the service context. */
export interface RunnerContext extends Traced {
  store: Store;
  metrics: Metrics;
  /** How long conflicts are retried before the write gives up (ms). */
  transactionDeadlineMs: number;
  /** Told when a commit is refused for want of room and when one lands, for readiness. */
  dataDisk?: FullDisk;
}

export interface RunOptions {
  /** The body only reads: one consistent snapshot beside the writers. */
  readOnly?: boolean;
  /** Work no caller waits for (the indexer's merges): see the store's `TransactOptions.background`. */
  background?: boolean;
  /** The body reads nothing it wrote: see the store's `TransactOptions.writesUnread`. */
  writesUnread?: boolean;
}

/** Runs `body` in a transaction of the store under the runner's retry policy. */
export async function runTransaction<T>(ctx: RunnerContext, body: TransactionBody<T>, options: RunOptions = {}): Promise<T> {
  // A span per transaction, its retries as events: free when tracing is off (the API's tracer is a no-op).
  const span = tracer().startSpan(
    options.readOnly ? 'baton.store.read' : 'baton.store.transaction',
    { attributes: { 'db.system.name': ctx.store.name === 'fdb' ? 'foundationdb' : 'lmdb' } },
    ctx.traceContext ?? context.active(),
  );
  try {
    return await runWithRetries(ctx, body, options, span);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: storeCause(error) ?? 'failed' });
    // Another instance sealed with a key this one lacks (a rolling key rotation): the value is whole, this instance cannot open it.
    if (error instanceof MissingKeyError) {
      throw new AppError('encryption_key_missing', { detail: `The value is sealed with encryption key "${error.keyId}", which this instance's key file does not have.`, extra: { keyId: error.keyId } });
    }
    throw error;
  } finally {
    span.end();
  }
}

async function runWithRetries<T>(ctx: RunnerContext, body: TransactionBody<T>, options: RunOptions, span: Span): Promise<T> {
  const deadline = Date.now() + ctx.transactionDeadlineMs;
  let outages = 0;
  let contended = 0;
  const mode = options.readOnly === true ? 'read' : 'write';
  for (;;) {
    ctx.metrics.storeTransactions.inc({ mode });
    try {
      const rerun = outages + contended > 0;
      const result = await ctx.store.transact(body, { readOnly: options.readOnly === true, background: options.background === true, writesUnread: options.writesUnread === true, maxRetries: 0, rerun });
      if (contended > 0) ctx.metrics.storeContention.inc({ outcome: 'committed' });
      if (mode === 'write') ctx.dataDisk?.wrote();
      return result;
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      const delay = retryDelay(error.code, { outages, contended, deadline });
      if (delay === undefined) {
        if (contended > 0) ctx.metrics.storeContention.inc({ outcome: 'gave_up' });
        ctx.metrics.storeErrors.inc({ code: error.code });
        if (error.code === 'no_space') ctx.dataDisk?.refused();
        throw asAppError(error, contended > 0);
      }
      if (error.code === 'unavailable') outages++;
      else contended++;
      ctx.metrics.storeRetries.inc({ code: error.code });
      span.addEvent('retry', { 'baton.store.error': error.code, 'baton.retry.attempt': outages + contended, 'baton.retry.delay_ms': Math.round(delay) });
      await sleep(delay);
    }
  }
}

/** How long to wait before trying again after `code`, or undefined when the runner gives up. */
function retryDelay(code: StoreErrorCode, tries: { outages: number; contended: number; deadline: number }): number | undefined {
  if (code === 'unavailable') return tries.outages < OUTAGE_RETRIES ? Math.random() * OUTAGE_BASE_MS * 2 ** tries.outages : undefined;
  if (code !== 'conflict' && code !== 'commit_unknown') return undefined;
  const ceiling = Math.min(CONTENTION_MAX_MS, CONTENTION_BASE_MS * 2 ** tries.contended);
  // Half fixed, half jittered, as FoundationDB's own backoff: writers that collided spread out.
  const delay = ceiling / 2 + Math.random() * (ceiling / 2);
  return Date.now() + delay < tries.deadline ? delay : undefined;
}

const ANSWER: Readonly<Record<StoreErrorCode, ErrorCode>> = {
  conflict: 'task_contended',
  commit_unknown: 'store_unavailable',
  unavailable: 'store_unavailable',
  timeout: 'store_unavailable',
  too_large: 'payload_too_large',
  no_space: 'insufficient_storage',
  not_configured: 'internal_error',
  internal: 'internal_error',
};

function asAppError(error: StoreError, contended: boolean): AppError {
  // A commit left unknown after contention is still contention to the caller: the same advice applies.
  const code = contended && error.code === 'commit_unknown' ? 'task_contended' : ANSWER[error.code];
  // The store's sentence names the full directory: the one fact the operator needs.
  return new AppError(code, { cause: error, ...(error.code === 'no_space' ? { detail: error.message } : {}) });
}

/** The store's error code behind an error the runner raised, if it raised it. */
export function storeCause(error: unknown): StoreErrorCode | undefined {
  return error instanceof AppError && error.cause instanceof StoreError ? error.cause.code : undefined;
}

/** The store could not be reached (or did not answer in time): the failure the write queue exists for. */
export function isOutage(error: unknown): boolean {
  const code = storeCause(error);
  return code === 'unavailable' || code === 'timeout';
}
