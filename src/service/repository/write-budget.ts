/**
 * How much one write transaction may do before a maintenance pass ends its
 * batch and carries on in the next: FoundationDB refuses a transaction over
 * 10,000,000 bytes and advises staying under 1 MB, and ends one after 5 s, so
 * a batch of a long pass (a purge of a task of any size) stops at 1 MB written
 * or a second, whichever comes first, measured by the store's own counters.
 *
 * @module
 */
import type { Transaction } from '../../store/store.js';

export interface WriteLimits {
  /** Bytes written, as FoundationDB counts a commit's size. */
  bytes: number;
  /** Milliseconds since the transaction began. */
  ms: number;
}

export const WRITE_BUDGET: Readonly<WriteLimits> = { bytes: 1_000_000, ms: 1_000 };

export class WriteBudget {
  constructor(
    private readonly tx: Transaction,
    private readonly limits: Readonly<WriteLimits> = WRITE_BUDGET,
  ) {}

  /** Whether another step writing about `bytes` more fits. */
  allows(bytes: number): boolean {
    const { bytesWritten, elapsedMs } = this.tx.stats();
    return bytesWritten + bytes <= this.limits.bytes && elapsedMs < this.limits.ms;
  }
}
