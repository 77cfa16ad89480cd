/**
 * A fault-injecting wrapper around a real store, for rehearsing an outage:
 * `unavailable` makes every transaction and ping fail as an unreachable
 * store does; `slow` delays each one by `latencyMs` before it runs; and
 * `conflictRate` makes that share of write transactions fail at commit with
 * `conflict`, as FoundationDB does when two writers of one task meet: the
 * body runs in full, nothing it wrote lands. Only started with
 * `--enable-fault-injection`; never on by default.
 *
 * @module
 */
import { StoreError, type Store, type TransactionBody, type TransactOptions } from './store.js';

export type FaultMode = 'ok' | 'unavailable' | 'slow';

export interface FaultState {
  store: FaultMode;
  latencyMs: number;
  /** The share of write transactions (0 to 1) that fail at commit with a conflict. */
  conflictRate?: number;
}

export class FaultInjectingStore implements Store {
  private state: FaultState = { store: 'ok', latencyMs: 0 };

  constructor(private readonly inner: Store) {}

  get name(): Store['name'] {
    return this.inner.name;
  }

  get commitOutcomeKnown(): boolean {
    return this.inner.commitOutcomeKnown;
  }

  get faults(): FaultState {
    return { ...this.state };
  }

  setFaults(state: FaultState): void {
    this.state = { ...state };
  }

  private async gate(): Promise<void> {
    if (this.state.store === 'unavailable') throw new StoreError('unavailable', 'The store is unavailable (fault injection).');
    if (this.state.store === 'slow' && this.state.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.state.latencyMs));
  }

  async transact<T>(body: TransactionBody<T>, options?: TransactOptions): Promise<T> {
    await this.gate();
    const rate = this.state.conflictRate ?? 0;
    if (rate === 0 || options?.readOnly === true) return this.inner.transact(body, options);
    // Decided per attempt, so a rerun of the body by the store may conflict again, as on a cluster.
    return this.inner.transact(async (tx) => {
      const result = await body(tx);
      if (Math.random() < rate) throw new StoreError('conflict', 'The transaction conflicted at commit (fault injection).');
      return result;
    }, options);
  }

  async ping(): Promise<void> {
    await this.gate();
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
