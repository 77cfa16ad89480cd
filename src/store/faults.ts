/**
 * A fault-injecting wrapper around a real store, for rehearsing an outage:
 * `unavailable` makes every transaction and ping fail as an unreachable
 * store does; `slow` delays each one by `latencyMs` before it runs. Only
 * started with `--enable-fault-injection`; never on by default.
 *
 * @module
 */
import { StoreError, type Store, type TransactionBody, type TransactOptions } from './store.js';

export type FaultMode = 'ok' | 'unavailable' | 'slow';

export interface FaultState {
  store: FaultMode;
  latencyMs: number;
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
    return this.inner.transact(body, options);
  }

  async ping(): Promise<void> {
    await this.gate();
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
