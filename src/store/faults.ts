/**
 * A fault-injecting wrapper around a real store, for rehearsing an outage:
 * `unavailable` makes every transaction and ping fail as an unreachable
 * store does; `slow` delays each one by `latencyMs` before it runs; `error`
 * makes transactions fail with a chosen {@link StoreError} code while pings
 * still answer (a store that is up but failing: a conflict storm, commits
 * whose outcome is lost), for `times` transactions or until changed, and
 * with `afterCommit` the transaction commits first and its answer is lost,
 * as FoundationDB's "commit unknown result" can be; and `conflictRate`
 * makes that share of write transactions fail at commit with `conflict`,
 * as FoundationDB does when two writers of one task meet: the body runs in
 * full, nothing it wrote lands. It counts the failures it injected, by
 * code, so a test can tell that its faults happened. Only started with
 * `--enable-fault-injection`; never on by default.
 *
 * @module
 */
import { StoreError, type Bytes, type Store, type StoreErrorCode, type StoreWatch, type TransactionBody, type TransactOptions } from './store.js';

export type FaultMode = 'ok' | 'unavailable' | 'slow' | 'error';

export interface FaultState {
  store: FaultMode;
  latencyMs: number;
  /** With `error`: the code transactions fail with (default `internal`). */
  code?: StoreErrorCode;
  /** With `error`: how many transactions fail before the store is `ok` again; absent, until the faults change. */
  times?: number;
  /** With `error`: each failing transaction commits first, then reports the failure. */
  afterCommit?: boolean;
  /** The share of write transactions (0 to 1) that fail at commit with a conflict, whatever the mode. */
  conflictRate?: number;
}

export class FaultInjectingStore implements Store {
  private state: FaultState = { store: 'ok', latencyMs: 0 };
  private readonly counts: Partial<Record<StoreErrorCode, number>> = {};

  /** The inner store's watch, behind the same gate as a ping; absent when the inner store has none. */
  readonly watch?: (key: Bytes) => Promise<StoreWatch>;
  /**
   * The inner store's companion, behind this store's gate: an outage or a
   * slow store injected here is the companion's too (one disk, one data
   * directory); failures counted by `times` stay this store's own.
   */
  readonly companion?: (name: string) => Store;

  constructor(
    private readonly inner: Store,
    /** The store whose outages this one shares (a companion's). */
    private readonly parent?: FaultInjectingStore,
  ) {
    if (inner.companion !== undefined) {
      const companion = inner.companion.bind(inner);
      this.companion = (name) => new FaultInjectingStore(companion(name), this);
    }
    if (inner.watch !== undefined) {
      const watch = inner.watch.bind(inner);
      this.watch = async (key) => {
        await this.gate();
        return watch(key);
      };
    }
  }

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

  /** The failures injected since the store was wrapped, by code (outages included, as `unavailable`). */
  get injectedFailures(): Partial<Record<StoreErrorCode, number>> {
    return { ...this.counts };
  }

  private count(error: StoreError): StoreError {
    this.counts[error.code] = (this.counts[error.code] ?? 0) + 1;
    return error;
  }

  private async gate(): Promise<void> {
    if (this.parent !== undefined) return this.parent.gate();
    if (this.state.store === 'unavailable') throw this.count(new StoreError('unavailable', 'The store is unavailable (fault injection).'));
    if (this.state.store === 'slow' && this.state.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.state.latencyMs));
  }

  /** The failure this transaction meets, counted against `times`; undefined when it runs as usual. */
  private injected(): { error: StoreError; afterCommit: boolean } | undefined {
    const state = this.state;
    if (state.store !== 'error') return undefined;
    if (state.times !== undefined) {
      if (state.times <= 0) return undefined;
      state.times -= 1;
      if (state.times === 0) this.state = { store: 'ok', latencyMs: 0 };
    }
    return { error: new StoreError(state.code ?? 'internal', 'The transaction failed (fault injection).'), afterCommit: state.afterCommit === true };
  }

  async transact<T>(body: TransactionBody<T>, options?: TransactOptions): Promise<T> {
    await this.gate();
    const fault = this.injected();
    if (fault !== undefined) {
      // A lost answer: the commit happened, its caller is told it may not have.
      if (fault.afterCommit) await this.inner.transact(body, options);
      throw this.count(fault.error);
    }
    const rate = this.state.conflictRate ?? 0;
    if (rate === 0 || options?.readOnly === true) return this.inner.transact(body, options);
    // Decided per attempt, so a rerun of the body by the store may conflict again, as on a cluster.
    return this.inner.transact(async (tx) => {
      const result = await body(tx);
      if (Math.random() < rate) throw this.count(new StoreError('conflict', 'The transaction conflicted at commit (fault injection).'));
      return result;
    }, options);
  }

  async ping(): Promise<void> {
    await this.gate();
    return this.inner.ping();
  }

  async compact(): Promise<boolean> {
    await this.gate();
    return this.inner.compact();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
