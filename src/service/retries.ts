/**
 * Transient store failures (an unreachable store, a conflict, a commit whose
 * outcome is unknown) are retried three times, with exponential backoff and
 * full jitter, before anything else happens: only then does a write go to
 * the local queue or a read answer 503. Each retry is counted by its cause
 * (`store_retries_total{code}`). The store itself is asked not to retry, so
 * the policy is this one, whatever the store.
 *
 * @module
 */
import type { Metrics } from '../metrics.js';
import { StoreError, type Store, type TransactionBody, type TransactOptions } from '../store/store.js';

/** Retries after the first attempt. */
export const RETRIES = 3;
/** The first backoff's ceiling; each retry doubles it. */
const BASE_MS = 20;

export async function transact<T>(ctx: { store: Store; metrics: Metrics }, body: TransactionBody<T>, options: TransactOptions = {}): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await ctx.store.transact(body, { ...options, maxRetries: 0 });
    } catch (error) {
      if (!(error instanceof StoreError) || !error.retriable || attempt >= RETRIES) throw error;
      ctx.metrics.storeRetries.inc({ code: error.code });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * BASE_MS * 2 ** attempt));
    }
  }
}
