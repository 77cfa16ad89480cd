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
import { CommittedValues } from './fdb-committed.js';
import { translate, translateFailure } from './fdb-errors.js';
import { FdbTransactionView } from './fdb-transaction.js';
import { withinDeadline } from './limits.js';
import { COMMIT_STAMP_BYTES, DEFAULT_TRANSACT_OPTIONS, StoreError } from './store.js';
import type { Bytes, Store, StoreHooks, StoreWatch, TransactionBody, TransactOptions } from './store.js';

export interface FdbStoreOptions {
  /** The cluster file; absent means the client library's default lookup. */
  clusterFile?: string;
  /** Prepended to every key, so several stores (or test runs) share one cluster. */
  prefix?: string;
  hooks?: StoreHooks;
  /**
   * Reading from the record of this process's commits (`fdb-committed.ts`):
   * how long a commit's reads serve later writes (default 3 s), and how
   * recently the cluster must have answered (default 2 ms). For tests.
   */
  committedReads?: { maxAgeMs?: number; quietMs?: number };
}

/** The newest API version the binding supports; it needs libfdb_c 7.2 or newer. */
const API_VERSION = 720;
const MAX_RETRY_DELAY_MS = 1_000;
const PING_OPTIONS: FdbTransactionOptions = { timeout: 2_000, retry_limit: 3, max_retry_delay: 200 };
/** `read_your_writes_disable` (`fdb.options`): not persistent, so set again on each attempt, before its first read or write. */
const READ_YOUR_WRITES_DISABLE = 51;
/**
 * `use_grv_cache` (`fdb.options`): the attempt takes its read version from
 * the client's cache (the newest of its last GRV and its last commit, at
 * most `MAX_VERSION_CACHE_LAG`, 0.1 s, old; none while the ratekeeper
 * throttles) instead of asking the cluster: one round trip fewer. Needs the
 * network option `disable_client_bypass`. Cleared by `onError`'s reset.
 */
const USE_GRV_CACHE = 1101;
/** transaction_too_old: a read version older than the cluster keeps (~5 s). */
const TRANSACTION_TOO_OLD = 1007;
/** Whether this process's network was started with `disable_client_bypass`, which the GRV cache needs. */
let grvCacheUsable = false;
/**
 * How many times a transaction whose commit outcome stayed unknown after the
 * retry loop (1031 during the commit, or 1021 on the last retry) is run again
 * in a new loop, each with the full `timeoutMs`; never more than `maxRetries`.
 */
const UNKNOWN_OUTCOME_RERUNS = 2;

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
    loaded = requireQuietly();
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
  try {
    loaded.configNetwork({ disable_client_bypass: true });
    grvCacheUsable = true;
  } catch {
    // A client library without the option (or a network started before): every transaction asks the cluster for its read version.
  }
  binding = loaded;
  return loaded;
}

/**
 * Requires the binding. When `libfdb_c` is missing, the binding prints two
 * lines of its own to `console.error` before it throws ("Could not load
 * native module…"), which would precede the one sentence the operator needs.
 * `require` is synchronous, so nothing else can log while `console.error` is
 * held here; the held lines are printed after all if the load succeeds.
 * `require` hands back the CommonJS exports exactly, where `import()` would
 * wrap them, and keeps the compiler from looking for the absent package.
 */
function requireQuietly(): FdbBinding {
  const original = console.error;
  const held: unknown[][] = [];
  console.error = (...line: unknown[]) => void held.push(line);
  let loaded: FdbBinding;
  try {
    loaded = requireCjs('foundationdb') as FdbBinding;
  } finally {
    console.error = original;
  }
  for (const line of held) original(...line);
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
  private readonly hooks: StoreHooks;
  private readonly running = new Set<Promise<unknown>>();
  private closed = false;
  /** What this process's last commits read, at their versions: a write's first attempt reads from it (`fdb-committed.ts`). */
  private readonly committed: CommittedValues;

  private constructor(fdb: FdbBinding, db: FdbDatabase, prefix: Bytes, hooks: StoreHooks, committedReads: FdbStoreOptions['committedReads'] = {}) {
    this.fdb = fdb;
    this.db = db;
    this.prefix = prefix;
    this.hooks = hooks;
    // Undefined takes the record's defaults.
    this.committed = new CommittedValues(undefined, committedReads.maxAgeMs, committedReads.quietMs);
  }

  static async open(options: FdbStoreOptions): Promise<FdbStore> {
    const fdb = await loadBinding();
    return new FdbStore(fdb, openDatabase(fdb, options.clusterFile), Buffer.from(options.prefix ?? '', 'utf8'), options.hooks ?? {}, options.committedReads);
  }

  transact<T>(body: TransactionBody<T>, options?: TransactOptions): Promise<T> {
    if (this.closed) return Promise.reject(new StoreError('unavailable', 'The store is closed.'));
    const run = this.run(body, options);
    this.running.add(run);
    const forget = (): void => void this.running.delete(run);
    run.then(forget, forget);
    return run;
  }

  /**
   * The binding's retry loop already runs the body again after 1021. A commit
   * whose outcome is still unknown when the loop ends is run again in a new
   * loop: a body that records its operation id (`once.ts`) then answers from
   * the record if the first commit landed, and applies once if it did not.
   *
   * A caller's write (not read-only, not background) reads, on its first
   * attempt, at the client's cached read version (`USE_GRV_CACHE`): a lone
   * create then waits for two round trips (its reads, its commit) instead
   * of three. What it read is as of that version, up to 0.1 s old, and only
   * its commit makes it safe: every key it read is a read conflict, so a
   * commit lands only if none changed since, and else runs again (`onError`
   * resets the transaction, and the next attempt asks the cluster). An
   * attempt that commits nothing (a write that found nothing to do, or a
   * body that refused, say on a version that no longer matches) has no
   * commit to check its reads: its answer could be another instance's
   * write behind, so it is run again at a fresh read version. So is one
   * whose commit conflicted, at once: the conflict says the cache was
   * behind (on a task another instance writes too, nearly always), not
   * that the task is contended, and the caller's backoff is for that.
   *
   * That first attempt also reads, where it can, what this process's last
   * commits read, at their commit's version (`fdb-committed.ts`): a write to
   * a task written here lately then waits for its commit alone, not for a
   * round trip of reads first. The same checks make it safe: its reads are
   * read conflicts, and a conflict or a commit of nothing runs it again.
   */
  private async run<T>(body: TransactionBody<T>, options: TransactOptions | undefined): Promise<T> {
    // A caller that asked for no retries (the service, which has its own policy) gets `commit_unknown` and runs it again itself.
    const reruns = Math.min(UNKNOWN_OUTCOME_RERUNS, options?.maxRetries ?? DEFAULT_TRANSACT_OPTIONS.maxRetries);
    let cached = grvCacheUsable && options?.readOnly !== true && options?.background !== true && options?.rerun !== true;
    for (let rerun = 0; ; cached = false) {
      try {
        return await this.loop(body, options, cached);
      } catch (error) {
        // Read at a cached version and committed nothing: run again at a version the cluster gives.
        if (error instanceof Unchecked) continue;
        if (!(error instanceof StoreError) || error.code !== 'commit_unknown' || rerun >= reruns) throw error;
        rerun += 1;
      }
    }
  }

  /**
   * One retry loop of the binding, with the port's limits on every attempt;
   * `cached`: its first attempt reads at the client's cached read version.
   * Throws {@link Unchecked} when the attempt that ended it read there and
   * committed nothing (it wrote nothing, or its body failed).
   */
  private async loop<T>(body: TransactionBody<T>, options: TransactOptions | undefined, cached: boolean): Promise<T> {
    // Every attempt's view hands out this one promise; it settles once the retry loop ends.
    let settleStamp!: (outcome: Promise<Bytes>) => void;
    const stamp = new Promise<Bytes>((resolve) => (settleStamp = resolve));
    // A caller that never asks for the stamp must not see an unhandled rejection.
    stamp.catch(() => undefined);
    let attemptStamp: Promise<Buffer> | undefined;
    const readOnly = options?.readOnly === true;
    // A caller's write records what it read at its commit, for the next writes of the same keys to read (`fdb-committed.ts`).
    const recorded = !readOnly && options?.background !== true;
    const writesUnread = options?.writesUnread === true && !readOnly;
    const timeoutMs = options?.timeoutMs ?? DEFAULT_TRANSACT_OPTIONS.timeoutMs;
    const deadline = Date.now() + timeoutMs;
    const tnOptions: FdbTransactionOptions = {
      // FDB measures both limits over the whole retry loop, as the port does.
      timeout: timeoutMs,
      retry_limit: options?.maxRetries ?? DEFAULT_TRANSACT_OPTIONS.maxRetries,
      max_retry_delay: MAX_RETRY_DELAY_MS,
    };
    /** The attempt being run, and whether its body finished, so that what follows is its commit. */
    let last: { tn: FdbTransaction; view: FdbTransactionView; committing: boolean; reported: boolean; cached: boolean } | undefined;
    const report = (committed: boolean): void => {
      if (last === undefined || last.reported) return;
      last.reported = true;
      this.hooks.onTransaction?.({ ...last.view.stats(), readOnly, committed, readsFromCommits: last.view.readsFromCommits });
    };
    let result: T;
    try {
      result = await this.db.doTn(async (tn) => {
        // The previous attempt, if any, failed at its commit and is being retried.
        report(false);
        if (last !== undefined && last.view.readsFromCommits > 0) this.committed.outcome(true);
        // Only the first attempt (none before it) reads at the cached version.
        const atCached = cached && last === undefined;
        if (atCached) tn.setOption(USE_GRV_CACHE);
        if (writesUnread) tn.setOption(READ_YOUR_WRITES_DISABLE);
        // The stamp must be requested before commit; only the last attempt's counts.
        attemptStamp = tn.getVersionstamp().promise;
        // An attempt that does not commit never gets its stamp: that rejection is expected.
        attemptStamp.catch(() => undefined);
        // The first attempt may also read what the process's last commits read, at their version (`fdb-committed.ts`).
        const view = new FdbTransactionView(tn, this.prefix, stamp, readOnly, recorded ? { values: this.committed, readFrom: atCached } : undefined);
        last = { tn, view, committing: false, reported: false, cached: atCached };
        try {
          const value = await withinDeadline(body(view), view.limits.deadline(deadline));
          // A read-only body has nothing to commit: LMDB checks its limits only as it reads, and so does this.
          if (!readOnly) view.limits.beforeCommit();
          last.committing = true;
          return value;
        } finally {
          // Work a body left running must not write into the next attempt.
          view.close();
        }
      }, tnOptions);
    } catch (error) {
      const failure = translateFailure(this.fdb, error, last?.committing === true);
      report(false);
      // The body refused at a cached read version (its reasons may be a write behind), or the cluster refused its commit
      // there as a conflict (which says only that the cache was behind, not that the key is contended): run again at
      // once at a fresh one. A conflict the body threw itself is its caller's to retry.
      const conflicted = failure instanceof StoreError && failure.code === 'conflict' && last?.committing === true;
      // A version read from a commit's record may have aged past FoundationDB's window (a stall of seconds): not the body's doing.
      const tooOld = failure instanceof StoreError && failure.backendCode === TRANSACTION_TOO_OLD && last !== undefined && last.view.readsFromCommits > 0;
      if (last?.cached === true && (!(failure instanceof StoreError) || conflicted || tooOld)) {
        if (last.view.readsFromCommits > 0) this.committed.outcome(true);
        settleStamp(Promise.reject(new StoreError('internal', 'The attempt was run again at a fresh read version.')));
        throw new Unchecked();
      }
      settleStamp(Promise.reject(failure));
      throw failure;
    }
    if (attemptStamp === undefined || last === undefined) throw new StoreError('internal', 'The transaction committed without running its body.');
    const wrote = last.view.wrote;
    report(wrote);
    if (!wrote && last.cached) {
      settleStamp(Promise.reject(new StoreError('internal', 'A transaction that wrote nothing has no commit stamp.')));
      throw new Unchecked();
    }
    if (last.view.readsFromCommits > 0) this.committed.outcome(false);
    if (wrote) this.committed.answered();
    if (wrote && recorded) {
      const { values, added } = last.view.committedReads();
      this.committed.record(last.tn.getCommittedVersion(), values, added);
    }
    settleStamp(readStamp(this.fdb, attemptStamp));
    if (wrote && this.hooks.commitOutcomeUnknown?.() === true) {
      throw new StoreError('commit_unknown', 'The commit outcome was reported unknown by a test hook.');
    }
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

  async watch(key: Bytes): Promise<StoreWatch> {
    if (this.closed) throw new StoreError('unavailable', 'The store is closed.');
    const full = this.prefix.length === 0 ? key : Buffer.concat([this.prefix, key]);
    try {
      // As the binding's own getAndWatch: read and watch in one transaction, armed at its commit.
      return await this.db.doTn(async (tn) => {
        const value = await tn.get(full);
        const watch = tn.watch(full);
        return { value, changed: watch.promise, cancel: () => watch.cancel() };
      }, PING_OPTIONS);
    } catch (error) {
      throw translate(this.fdb, error);
    }
  }

  /**
   * Nothing to rewrite here: the files are the storage servers', and
   * FoundationDB gives a client no way to compact them (`docs/encryption.md`
   * says what an operator can do instead).
   */
  async compact(): Promise<boolean> {
    if (this.closed) throw new StoreError('unavailable', 'The store is closed.');
    return false;
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

/** An attempt at a cached read version committed nothing, or conflicted: {@link FdbStore.run} runs the body again at a fresh one. */
class Unchecked extends Error {}

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
