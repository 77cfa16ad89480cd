/**
 * The part of the `foundationdb` npm binding (2.0.1) that the FoundationDB
 * store uses. The package is an optional dependency, absent wherever the
 * FoundationDB client library is not installed, so its own types cannot be
 * imported; these declarations copy its `dist/lib/*.d.ts` signatures, narrowed
 * to the root database's identity encoding, where keys and values go in and
 * come out as raw Buffers.
 *
 * @module
 */

/** The module's exports (`dist/lib/index.d.ts`). */
export interface FdbBinding {
  /** Must precede every other call; accepts at most 720 (`apiVersion.d.ts`). */
  setAPIVersion(version: number): void;
  /** Starts the network thread on first use, then opens synchronously. */
  open(clusterFile?: string): FdbDatabase;
  /** Network options (`opts.g.d.ts`, `NetworkOptions`): before the first `open`, which starts the network. */
  configNetwork(options: { disable_client_bypass?: true }): void;
  /** The class of every error the client library reports (`error.d.ts`). */
  FDBError: abstract new (description: string, code: number) => FdbError;
}

export interface FdbError extends Error {
  /** FoundationDB's error number, as listed in `flow/error_definitions.h`. */
  code: number;
}

/** The subset of `TransactionOptions` (`opts.g.d.ts`) the store sets. */
export interface FdbTransactionOptions {
  /** Milliseconds for the whole retry loop; since API 610 `onError` keeps it. */
  timeout?: number;
  /** Retries before `onError` rethrows the last error. */
  retry_limit?: number;
  /** Ceiling of the exponential backoff between retries, in milliseconds. */
  max_retry_delay?: number;
}

/** The subset of `RangeOptions` (`transaction.d.ts`) the store passes. */
export interface FdbRangeOptions {
  /** 0 means no limit. */
  limit?: number;
  reverse?: boolean;
}

/** `Database` (`database.d.ts`) at the root subspace. */
export interface FdbDatabase {
  /** Runs `body`, commits, and on a retryable `FDBError` runs it again. */
  doTn<T>(body: (tn: FdbTransaction) => Promise<T>, opts?: FdbTransactionOptions): Promise<T>;
}

/** `Transaction` (`transaction.d.ts`) at the root subspace, promise overloads only. */
export interface FdbTransaction {
  /** `undefined` when the key is absent. */
  get(key: Buffer): Promise<Buffer | undefined>;
  /** With no `end`, `start` is a prefix. */
  getRangeAll(start: Buffer, end?: Buffer, opts?: FdbRangeOptions): Promise<[Buffer, Buffer][]>;
  /** A transaction option by its code (`fdbclient/vexillographer/fdb.options`); most must be set before the first read or write. */
  setOption(code: number, value?: number | string | Buffer): void;
  /** The same transaction, reading without read conflict ranges. */
  snapshot(): Pick<FdbTransaction, 'getRangeAll'>;
  /** A read conflict on `key` without reading it. */
  addReadConflictKey(key: Buffer): void;
  /** Reads at `version` (8 bytes, big-endian) instead of one the cluster gives: before the first read. */
  setReadVersion(version: Buffer): void;
  /** After a commit that wrote something: the version it committed at (8 bytes, big-endian). */
  getCommittedVersion(): Buffer;
  set(key: Buffer, val: Buffer): void;
  clear(key: Buffer): void;
  clearRange(start: Buffer, end?: Buffer): void;
  /** Little-endian addition of `oper` to the stored value. */
  add(key: Buffer, oper: Buffer): void;
  /** Sets `prefix ‖ 10-byte versionstamp ‖ suffix`; the prefix is not scoped by a subspace. */
  setVersionstampedKeyBuf(prefix: Buffer | undefined, suffix: Buffer | undefined, value: Buffer): void;
  /** Settles after commit: awaiting it inside the body deadlocks. */
  getVersionstamp(): { promise: Promise<Buffer> };
  /**
   * Armed when the transaction commits; its promise resolves true once the
   * key's value changes after the transaction's read version (or, rarely,
   * spuriously), false when cancelled or when an error ends it (the
   * standard errors are not thrown unless `throwAllErrors`).
   */
  watch(key: Buffer, opts?: { throwAllErrors?: boolean }): FdbWatch;
}

/** `Watch` (`native.d.ts`). */
export interface FdbWatch {
  cancel(): void;
  promise: Promise<boolean>;
}
