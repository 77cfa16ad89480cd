/**
 * The FoundationDB store, on the `foundationdb` npm binding. The only file that
 * loads the binding, and only when this store is chosen: the package is an
 * optional dependency that needs the native client library `libfdb_c`.
 *
 * Transactions run in the binding's retry loop (`doTn`), which asks the client
 * library whether an error is retryable and runs the body again if so. That
 * includes 1021 `commit_unknown_result`, after which the first attempt may
 * have committed: bodies must be idempotent, and logical writes carry an
 * operation id recorded in the same transaction (`once.ts`).
 *
 * Every key lives under the configured prefix. The store concatenates the
 * prefix itself instead of scoping the database with `db.at(prefix)`, because
 * the binding's versionstamped writes ignore a subspace's prefix; one explicit
 * rule for every operation is easier to check than two.
 *
 * @module
 */
import { createRequire } from 'node:module';
import type { FdbBinding, FdbDatabase, FdbTransaction, FdbTransactionOptions } from './fdb-binding.js';
import { COMMIT_STAMP_BYTES, DEFAULT_TRANSACT_OPTIONS, encodeCounter, prefixEnd, StoreError } from './store.js';
import type { Bytes, KeyValue, RangeOptions, Store, StoreErrorCode, Transaction, TransactionBody, TransactOptions } from './store.js';

export interface FdbStoreOptions {
  /** The cluster file; absent means the client library's default lookup. */
  clusterFile?: string;
  /** Prepended to every key, so several stores (or test runs) share one cluster. */
  prefix?: string;
}

/** The newest API version the binding supports; it needs libfdb_c 7.2 or newer. */
const API_VERSION = 720;
const MAX_RETRY_DELAY_MS = 1_000;
const PING_OPTIONS: FdbTransactionOptions = { timeout: 2_000, retry_limit: 3, max_retry_delay: 200 };

/** Why the binding would not load, in the one sentence an operator needs. */
export const CLIENT_MISSING_MESSAGE =
  'BATON_STORE=fdb needs the FoundationDB client library (libfdb_c 7.2 or newer, e.g. the foundationdb-clients 7.3 package) and the optional npm package foundationdb; install both or use BATON_STORE=lmdb.';

const requireCjs = createRequire(import.meta.url);
let binding: FdbBinding | undefined;
/** One handle per cluster file: the network thread behind them starts once and cannot restart. */
const databases = new Map<string, FdbDatabase>();

/**
 * Loads the binding and selects the API version, once per process. Throws a
 * `not_configured` {@link StoreError} when the package or `libfdb_c` is missing.
 */
export async function loadBinding(): Promise<FdbBinding> {
  if (binding !== undefined) return binding;
  let loaded: FdbBinding;
  try {
    // `require` hands back the CommonJS exports exactly, where `import()` would
    // wrap them; and it keeps the compiler from looking for the absent package.
    loaded = requireCjs('foundationdb') as FdbBinding;
  } catch (error) {
    if (isClientMissing(error)) throw new StoreError('not_configured', CLIENT_MISSING_MESSAGE, { cause: error, backendCode: errorCode(error) });
    throw new StoreError('not_configured', 'The FoundationDB binding failed to load.', { cause: error, backendCode: errorCode(error) });
  }
  try {
    loaded.setAPIVersion(API_VERSION);
  } catch (error) {
    const message = 'The FoundationDB client library does not support API version 720; install libfdb_c 7.2 or newer.';
    throw new StoreError('not_configured', message, { cause: error, backendCode: errorCode(error) });
  }
  binding = loaded;
  return loaded;
}

function isClientMissing(error: unknown): boolean {
  const code = errorCode(error);
  if (code === 'MODULE_NOT_FOUND' || code === 'ERR_DLOPEN_FAILED') return true;
  const message = error instanceof Error ? error.message : String(error);
  // node-gyp-build's words when no prebuild matches this platform.
  return /libfdb_c|No native build was found/.test(message);
}

function errorCode(error: unknown): string | number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' || typeof code === 'number' ? code : undefined;
}

function openDatabase(fdb: FdbBinding, clusterFile: string | undefined): FdbDatabase {
  const id = clusterFile ?? '';
  let db = databases.get(id);
  if (db === undefined) {
    try {
      db = fdb.open(clusterFile);
    } catch (error) {
      throw new StoreError('not_configured', 'The FoundationDB cluster file could not be opened.', { cause: error, backendCode: errorCode(error) });
    }
    databases.set(id, db);
  }
  return db;
}

export class FdbStore implements Store {
  readonly name = 'fdb' as const;
  /** 1021 commit_unknown_result: a retried body may find its first attempt committed. */
  readonly commitOutcomeKnown = false;
  private readonly fdb: FdbBinding;
  private readonly db: FdbDatabase;
  private readonly prefix: Bytes;
  private readonly running = new Set<Promise<unknown>>();
  private closed = false;

  private constructor(fdb: FdbBinding, db: FdbDatabase, prefix: Bytes) {
    this.fdb = fdb;
    this.db = db;
    this.prefix = prefix;
  }

  static async open(options: FdbStoreOptions): Promise<FdbStore> {
    const fdb = await loadBinding();
    return new FdbStore(fdb, openDatabase(fdb, options.clusterFile), Buffer.from(options.prefix ?? '', 'utf8'));
  }

  transact<T>(body: TransactionBody<T>, options?: TransactOptions): Promise<T> {
    if (this.closed) return Promise.reject(new StoreError('unavailable', 'The store is closed.'));
    const run = this.run(body, options);
    this.running.add(run);
    const forget = (): void => void this.running.delete(run);
    run.then(forget, forget);
    return run;
  }

  private async run<T>(body: TransactionBody<T>, options: TransactOptions | undefined): Promise<T> {
    // Every attempt's view hands out this one promise; it settles once the retry loop ends.
    let settleStamp!: (outcome: Promise<Bytes>) => void;
    const stamp = new Promise<Bytes>((resolve) => (settleStamp = resolve));
    // A caller that never asks for the stamp must not see an unhandled rejection.
    stamp.catch(() => undefined);
    let attemptStamp: Promise<Buffer> | undefined;
    const timeoutMs = options?.timeoutMs ?? DEFAULT_TRANSACT_OPTIONS.timeoutMs;
    const deadline = Date.now() + timeoutMs;
    const tnOptions: FdbTransactionOptions = {
      // FDB measures both limits over the whole retry loop, as the port does.
      timeout: timeoutMs,
      retry_limit: options?.maxRetries ?? DEFAULT_TRANSACT_OPTIONS.maxRetries,
      max_retry_delay: MAX_RETRY_DELAY_MS,
    };
    let result: T;
    try {
      result = await this.db.doTn(async (tn) => {
        // The stamp must be requested before commit; only the last attempt's counts.
        attemptStamp = tn.getVersionstamp().promise;
        const tx = new FdbTransactionView(tn, this.prefix, stamp, options?.readOnly === true);
        try {
          return await withinDeadline(body(tx), deadline);
        } finally {
          // Work a body left running must not write into the next attempt.
          tx.close();
        }
      }, tnOptions);
    } catch (error) {
      const failure = translate(this.fdb, error);
      settleStamp(Promise.reject(failure));
      throw failure;
    }
    if (attemptStamp === undefined) throw new StoreError('internal', 'The transaction committed without running its body.');
    settleStamp(readStamp(this.fdb, attemptStamp));
    return result;
  }

  async ping(): Promise<void> {
    if (this.closed) throw new StoreError('unavailable', 'The store is closed.');
    try {
      await this.db.doTn((tn) => tn.get(this.prefix), PING_OPTIONS);
    } catch (error) {
      const failure = translate(this.fdb, error);
      // A cluster that cannot be reached makes reads wait, not fail: the ping's deadline is the signal.
      if (failure instanceof StoreError && failure.code === 'timeout') {
        throw new StoreError('unavailable', 'FoundationDB did not answer within the ping time limit.', { cause: error, backendCode: failure.backendCode });
      }
      throw failure;
    }
  }

  /**
   * Waits for running transactions and refuses new ones. The network thread
   * and the shared database handle stay up: FoundationDB cannot start the
   * network again in this process, and other stores may share the handle.
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.running]);
  }
}

/**
 * FDB's `timeout` cancels FDB operations only; a body awaiting anything else
 * would hold the transaction (and `close()`) forever without this bound.
 */
function withinDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreError('timeout', MESSAGES.timeout)), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

/** The commit's stamp, or why it has none. */
async function readStamp(fdb: FdbBinding, versionstamp: Promise<Buffer>): Promise<Bytes> {
  let stamp: Buffer;
  try {
    stamp = await versionstamp;
  } catch (error) {
    // 2021 no_commit_version: a read-only commit has no version, hence no stamp.
    if (!(error instanceof fdb.FDBError) || error.code !== 2021) throw translate(fdb, error);
    throw new StoreError('internal', 'A transaction that wrote nothing has no commit stamp.', { cause: error, backendCode: 2021 });
  }
  if (stamp.length !== COMMIT_STAMP_BYTES) {
    throw new StoreError('internal', 'FoundationDB returned a commit stamp of an unexpected length.', { backendCode: stamp.length });
  }
  return stamp;
}

/** One attempt's view of a FoundationDB transaction, in the store's own keys. */
class FdbTransactionView implements Transaction {
  private readonly tn: FdbTransaction;
  private readonly prefix: Bytes;
  private readonly stamp: Promise<Bytes>;
  private readonly readOnly: boolean;
  private open = true;

  constructor(tn: FdbTransaction, prefix: Bytes, stamp: Promise<Bytes>, readOnly: boolean) {
    this.tn = tn;
    this.prefix = prefix;
    this.stamp = stamp;
    this.readOnly = readOnly;
  }

  /** A read-only transaction refuses writes, as the port promises. */
  private writable(): void {
    if (this.readOnly) throw new StoreError('internal', 'A read-only transaction cannot write.');
  }

  async get(key: Bytes): Promise<Bytes | undefined> {
    return this.tn.get(this.key(key));
  }

  async getRange(begin: Bytes, end: Bytes, options?: RangeOptions): Promise<KeyValue[]> {
    if (Buffer.compare(begin, end) >= 0) return [];
    return this.readRange(this.key(begin), this.key(end), options);
  }

  /** With the store's prefix in front, even the empty prefix has an end: it reads the whole store. */
  async getPrefix(prefix: Bytes, options?: RangeOptions): Promise<KeyValue[]> {
    const begin = this.key(prefix);
    return this.readRange(begin, prefixEnd(begin), options);
  }

  set(key: Bytes, value: Bytes): void {
    this.writable();
    this.tn.set(this.key(key), value);
  }

  clear(key: Bytes): void {
    this.writable();
    this.tn.clear(this.key(key));
  }

  clearRange(begin: Bytes, end: Bytes): void {
    this.writable();
    // FDB reports an inverted range as an error at commit; the port treats it as empty.
    if (Buffer.compare(begin, end) >= 0) return;
    this.tn.clearRange(this.key(begin), this.key(end));
  }

  clearPrefix(prefix: Bytes): void {
    this.writable();
    const begin = this.key(prefix);
    this.tn.clearRange(begin, prefixEnd(begin));
  }

  add(key: Bytes, delta: number | bigint): void {
    this.writable();
    this.tn.add(this.key(key), encodeCounter(delta));
  }

  setStamped(prefix: Bytes, suffix: Bytes, value: Bytes): void {
    this.writable();
    this.tn.setVersionstampedKeyBuf(this.key(prefix), suffix, value);
  }

  commitStamp(): Promise<Bytes> {
    return this.stamp;
  }

  close(): void {
    this.open = false;
  }

  private async readRange(begin: Bytes, end: Bytes, options: RangeOptions = {}): Promise<KeyValue[]> {
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : 0;
    const rows = await this.tn.getRangeAll(begin, end, { limit, reverse: options.reverse === true });
    return rows.map(([key, value]) => ({ key: key.subarray(this.prefix.length), value }));
  }

  /** Every operation passes its keys through here, so this is also where a finished attempt refuses them. */
  private key(key: Bytes): Bytes {
    if (!this.open) throw new StoreError('internal', 'The transaction is over; its body kept running after it ended.');
    return this.prefix.length === 0 ? key : Buffer.concat([this.prefix, key]);
  }
}

/**
 * What each FoundationDB error (`flow/error_definitions.h`) means to the port.
 * The retriable ones are those FDB's own `onError` retries; they reach here
 * only when the retry limit ran out. Codes not listed are `internal`, except
 * 1100–1199 (broken promises, cancelled operations), which are transient.
 */
const FDB_ERRORS: ReadonlyMap<number, StoreErrorCode> = new Map(
  (
    [
      // not_committed; transaction_too_old, which a fresh read version fixes as after a conflict.
      ['conflict', [1020, 1007]],
      // commit_unknown_result; cluster_version_changed: either way the commit may have landed.
      ['commit_unknown', [1021, 1039]],
      // timed_out; transaction_timed_out, the `timeout` option running out.
      ['timeout', [1004, 1031]],
      // future_version, connection_failed, process_behind, database_locked, lookup_failed,
      // commit/GRV proxy memory limits, and the throttles: batch, tag, proxy tag, hot shard.
      ['unavailable', [1009, 1026, 1037, 1038, 1041, 1042, 1078, 1211, 1051, 1213, 1223, 1235]],
      // transaction_too_large, key_too_large, value_too_large.
      ['too_large', [2101, 2102, 2103]],
      // Cluster file not found or unreadable; network set up wrongly; protocol or client
      // mismatch; connection string invalid; TLS; API version not supported.
      ['not_configured', [1511, 1513, 1515, 2008, 2009, 2022, 2025, 2100, 2104, 2107, 2125, 2203]],
    ] as const
  ).flatMap(([kind, codes]) => codes.map((code) => [code, kind] as [number, StoreErrorCode])),
);

const MESSAGES: Record<StoreErrorCode, string> = {
  conflict: 'The transaction could not commit before its retries ran out; it may be tried again.',
  commit_unknown: 'FoundationDB could not tell whether the transaction committed.',
  timeout: 'The transaction ran past its time limit.',
  unavailable: 'FoundationDB is not available.',
  too_large: 'A key, value or transaction is larger than FoundationDB allows.',
  not_configured: 'The FoundationDB client or cluster file is not configured correctly.',
  internal: 'FoundationDB reported an unexpected error.',
};

/** Turns an `FDBError` into a {@link StoreError}; anything else, such as a body's own error, is returned as is. */
function translate(fdb: FdbBinding, error: unknown): unknown {
  if (!(error instanceof fdb.FDBError)) return error;
  const code = FDB_ERRORS.get(error.code) ?? (error.code >= 1100 && error.code < 1200 ? 'unavailable' : 'internal');
  return new StoreError(code, MESSAGES[code], { cause: error, backendCode: error.code });
}
