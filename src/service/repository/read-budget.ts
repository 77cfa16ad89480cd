/**
 * How much one read transaction may do before it answers with a cursor
 * instead. FoundationDB ends a transaction's reads after about 5 seconds, and
 * a walk such as lineage makes one round trip per key (0.5–1 ms each on a
 * cluster), so every listing that could grow without bound stops at this
 * budget, measured by the store's own counters (`Transaction.stats()`).
 *
 * @module
 */
import type { Transaction } from '../../store/store.js';

export interface ReadLimits {
  /** Keys read: point reads plus range rows. */
  keys: number;
  /** Bytes of keys and values read. */
  bytes: number;
  /** Milliseconds since the transaction began. */
  ms: number;
}

/**
 * The budget of one read transaction: 2,000 keys are 1–2 s of sequential
 * round trips on a cluster, under FoundationDB's 5 s with room to spare; a
 * second of wall time stops a slow cluster sooner; 8 MB keeps one answer
 * from holding a large part of the memory.
 */
export const READ_BUDGET: Readonly<ReadLimits> = { keys: 2_000, bytes: 8_000_000, ms: 1_000 };

export class ReadBudget {
  /** Keys and bytes read before the budget began, not counted against it. */
  private readonly before: { keys: number; bytes: number };

  /**
   * `fromNow`: what the transaction has read so far is not counted (a
   * search's probe of word runs, itself bounded, before the page's reads).
   */
  constructor(
    private readonly tx: Transaction,
    private readonly limits: Readonly<ReadLimits> = READ_BUDGET,
    fromNow = false,
  ) {
    const { keysRead, bytesRead } = fromNow ? tx.stats() : { keysRead: 0, bytesRead: 0 };
    this.before = { keys: keysRead, bytes: bytesRead };
  }

  /** How many more keys the transaction may read; 0 once its bytes or its time are spent. */
  keysLeft(): number {
    const { keysRead, bytesRead, elapsedMs } = this.tx.stats();
    if (bytesRead - this.before.bytes >= this.limits.bytes || elapsedMs >= this.limits.ms) return 0;
    return Math.max(0, this.limits.keys - (keysRead - this.before.keys));
  }

  /** Whether `keys` more keys fit. */
  allows(keys: number): boolean {
    return this.keysLeft() >= keys;
  }
}
