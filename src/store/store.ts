/**
 * The storage port: one small transactional key-value interface, modelled on
 * FoundationDB's, that every Baton store implements and the repository is
 * written against. Nothing above `store/` sees a backend or its errors.
 *
 * Keys and values are bytes. Keys order bytewise (unsigned, lexicographic,
 * shorter first on a common prefix), exactly as FoundationDB orders them.
 *
 * @module
 */

/** A key or a value: bytes, compared bytewise. */
export type Bytes = Buffer;

/** One entry of a range read. */
export interface KeyValue {
  key: Bytes;
  value: Bytes;
}

export interface RangeOptions {
  /** At most this many entries; absent or 0 means no limit. */
  limit?: number;
  /** Newest-last order is the default; `reverse` returns the highest keys first. */
  reverse?: boolean;
  /**
   * Read without a read conflict range (FoundationDB's snapshot read): a
   * write to the range by another transaction meanwhile does not make this
   * one run again; the rows the body must find unchanged it names with
   * {@link Transaction.addReadConflictKey}. A store whose write transactions
   * never overlap (LMDB) reads as ever.
   */
  snapshot?: boolean;
}

/**
 * The length of a commit stamp in bytes: 8 bytes of commit sequence and 2 of
 * order within that commit, big-endian, as FoundationDB's 10-byte versionstamp.
 */
export const COMMIT_STAMP_BYTES = 10;

/**
 * What a transaction body can do. Reads see the transaction's own writes
 * (read-your-writes); nothing it writes is visible to others until commit.
 */
export interface Transaction {
  /** The value at `key`, or `undefined` when the key is absent. */
  get(key: Bytes): Promise<Bytes | undefined>;

  /**
   * Entries with `begin <= key < end`, in key order (or reverse order), at most
   * `limit` of them. An empty array means the range holds nothing.
   */
  getRange(begin: Bytes, end: Bytes, options?: RangeOptions): Promise<KeyValue[]>;

  /** Every entry whose key starts with `prefix`, the key equal to `prefix` included. */
  getPrefix(prefix: Bytes, options?: RangeOptions): Promise<KeyValue[]>;

  /** Sets `key`. The store may keep both buffers until commit: do not change them afterwards. */
  set(key: Bytes, value: Bytes): void;

  /** Removes `key`; clearing an absent key is not an error. */
  clear(key: Bytes): void;

  /**
   * Sets `key` blind: the write commits with the transaction and read-only
   * transactions see it once committed, as any write; but this transaction
   * and write transactions that start before it is durable may not read it
   * back (on LMDB they do not; a range clear does not see it either). For keys
   * only read-only transactions read, such as secondary index entries: the
   * store skips the bookkeeping that lets writers read pending writes. Do not
   * mix it with `set` or `clear` of the same key in one transaction.
   */
  setBlind(key: Bytes, value: Bytes): void;

  /** Removes `key` blind; see {@link setBlind}. */
  clearBlind(key: Bytes): void;

  /**
   * Sets `key` to `value` unless it holds that already: for a flag that many
   * transactions set and few clear. The LMDB store reads the key (a local
   * read, through the writes not yet durable) and writes only when it
   * differs, so a commit does not copy the flag's page and the branches above
   * it each time; FoundationDB sets it blind (a read there is a round trip,
   * and a write of the same value costs no page). Do not mix it with other
   * writes of the same key in one transaction.
   */
  setUnlessHeld(key: Bytes, value: Bytes): void;

  /** Removes every key with `begin <= key < end`. */
  clearRange(begin: Bytes, end: Bytes): void;

  /** Removes every key that starts with `prefix`, the key equal to `prefix` included. */
  clearPrefix(prefix: Bytes): void;

  /**
   * Adds `delta` to the 8-byte little-endian signed integer at `key` (absent
   * counts as 0) without reading it, so concurrent adds never conflict. Read
   * it back with {@link decodeCounter}.
   */
  add(key: Bytes, delta: number | bigint): void;

  /**
   * Sets the key `prefix ‖ stamp ‖ suffix`, where `stamp` is this commit's
   * {@link COMMIT_STAMP_BYTES}-byte commit stamp. Stamps grow with commit
   * order across all transactions of a store, so keys written this way sort in
   * the order their transactions committed, with no shared counter. A
   * transaction cannot read back the keys it writes this way.
   */
  setStamped(prefix: Bytes, suffix: Bytes, value: Bytes): void;

  /**
   * This transaction's commit stamp. The promise settles only after commit:
   * await it outside the body (after `transact` resolves), never inside.
   */
  commitStamp(): Promise<Bytes>;

  /** What this attempt has read and written so far, counted by the store; reads use it to keep within a budget. */
  stats(): TransactionStats;

  /**
   * Makes `key` count as read without reading it: the commit fails with a
   * conflict, and the body runs again, if another transaction wrote the key
   * since this one's snapshot. Only a store whose write transactions overlap
   * has it (FoundationDB); on the others no write can come between.
   */
  addReadConflictKey?(key: Bytes): void;

  /**
   * True where other processes write the same store (FoundationDB): what one
   * process knows from its own writes (how long a list it appends to has
   * grown) the others learn only from the store. Absent on a store one
   * process holds (LMDB).
   */
  readonly shared?: boolean;
}

/**
 * FoundationDB's limits, which both stores enforce with the same
 * {@link StoreError} codes, so that whatever passes on the embedded store
 * passes on a cluster (`docs/storage.md`, "Limits").
 */
export const STORE_LIMITS = {
  /**
   * Bytes of a key (without the FoundationDB store's prefix). FoundationDB
   * allows 10,000 and lmdb-js is built for 1,978; both stores refuse a key over
   * the smaller, `too_large`, so a key is accepted by both or by neither.
   */
  keyBytes: 1_978,
  /** Bytes of a value (FoundationDB's 2103 value_too_large beyond); `too_large`. */
  valueBytes: 100_000,
  /** Bytes one transaction writes, counted as {@link TransactionStats.bytesWritten} (FoundationDB's 2101); `too_large` at commit. */
  transactionBytes: 10_000_000,
  /**
   * Milliseconds one attempt may run: FoundationDB's read versions expire after
   * about 5 s (1007). A body that runs longer fails with `timeout` whatever
   * `timeoutMs` allows, which bounds the whole loop of attempts.
   */
  transactionMs: 5_000,
} as const;

/** What one attempt of a transaction has done, counted by the store itself. */
export interface TransactionStats {
  /** One per point read, plus the rows of each range read (a range read counts at least one: it is a round trip). */
  keysRead: number;
  /** Bytes of the keys and values returned. */
  bytesRead: number;
  /**
   * Bytes written, as FoundationDB counts a commit's size: every mutation's
   * key and value (a range clear: both ends), plus each written key once more
   * for its write conflict range. Compared with {@link STORE_LIMITS.transactionBytes}.
   */
  bytesWritten: number;
  /** Milliseconds since the attempt's body began. */
  elapsedMs: number;
}

/** An attempt that ended, as {@link StoreHooks.onTransaction} receives it. */
export interface FinishedTransaction extends TransactionStats {
  readOnly: boolean;
  /** True when the attempt committed writes; false for reads, failures and attempts that wrote nothing. */
  committed: boolean;
  /** FoundationDB: point reads answered from what the process's last commits read, at their version (`fdb-committed.ts`). */
  readsFromCommits?: number;
}

/** Observers and test hooks a store is opened with. */
export interface StoreHooks {
  /** Called after every attempt of every transaction, successful or not; for metrics and tests. */
  onTransaction?(finished: FinishedTransaction): void;
  /**
   * For tests only. Asked after each commit that wrote something; `true`
   * makes the store treat that real commit as if its outcome were unknown
   * (FoundationDB's 1021) and run the body again, as FoundationDB's retry loop
   * does. A store opened with this hook reports `commitOutcomeKnown: false`,
   * so the service records an operation id with every write.
   */
  commitOutcomeUnknown?(): boolean;
}

export interface TransactOptions {
  /** Give up after this many milliseconds in all, retries included. */
  timeoutMs?: number;
  /** Give up after this many retries of a retriable failure. */
  maxRetries?: number;
  /**
   * The body only reads. It sees one consistent snapshot holding every
   * transaction that had resolved before it began, never waits for writers,
   * and any write it tries throws.
   */
  readOnly?: boolean;
  /**
   * Work no caller waits for (the indexer's merges). Over LMDB its commit
   * neither waits in the commit window for others nor counts as a write
   * under way that others wait for (`lmdb-commit-window.ts`).
   */
  background?: boolean;
  /**
   * The body reads no key after writing it (every read of the indexer's
   * merge over FoundationDB comes before its writes). FoundationDB then
   * keeps no read-your-writes map of the transaction's writes
   * (`read_your_writes_disable`): each of a merge's thousands of sets was a
   * tree insert on the client's network thread, most of what the merge cost
   * the client. A read of a key the body wrote would see the stored value.
   * LMDB ignores it.
   */
  writesUnread?: boolean;
  /**
   * The caller runs the body again after an attempt failed (a conflict, an
   * unknown commit, an outage): FoundationDB reads at a read version the
   * cluster gives, not the client's cached one (`fdb.ts`), which may be the
   * very version the conflict came from. LMDB ignores it.
   */
  rerun?: boolean;
}

export const DEFAULT_TRANSACT_OPTIONS: Required<TransactOptions> = {
  timeoutMs: 5_000,
  maxRetries: 20,
  readOnly: false,
  background: false,
  writesUnread: false,
  rerun: false,
};

/**
 * A transaction body. The store may run it more than once (after a conflict,
 * or after a commit whose outcome was unknown), so it must be idempotent: no
 * side effects outside the transaction, no ids minted inside that must stay
 * stable. Mint them before and pass them in.
 */
export type TransactionBody<T> = (tx: Transaction) => Promise<T>;

/**
 * A transactional key-value store.
 *
 * `transact` runs the body, commits its writes atomically and serializably,
 * and resolves with the body's result once the commit is durable. A body that
 * throws writes nothing and its error is rethrown as is. Retriable failures
 * are retried within {@link TransactOptions}; what remains is a
 * {@link StoreError}. A commit whose outcome is unknown (it may have landed)
 * is retried too, by running the body again: a body that records an
 * operation id (`once.ts`) then finds its first result instead of applying
 * twice. Every attempt keeps within {@link STORE_LIMITS}.
 */
export interface Store {
  readonly name: 'lmdb' | 'fdb';
  /**
   * True when a commit's outcome is always known, so the store never runs a
   * committed body a second time (LMDB). False when it may (FoundationDB's
   * 1021): then every logical write must record an operation id.
   */
  readonly commitOutcomeKnown: boolean;
  transact<T>(body: TransactionBody<T>, options?: TransactOptions): Promise<T>;
  /** A cheap round trip that throws a {@link StoreError} when the store cannot serve. */
  ping(): Promise<void>;
  /**
   * Rewrites the store's own files so that they hold only the values that
   * are live now: pages an earlier write freed, which may still carry a value
   * as it was (plain before encryption was on, or sealed with a retired
   * key), are gone once it resolves. Writes wait while it runs. Resolves
   * true when the files were rewritten, false when the store keeps no files
   * of its own to rewrite (FoundationDB: its storage servers hold them).
   */
  compact(): Promise<boolean>;
  close(): Promise<void>;
  /**
   * Where other processes write the same keys (FoundationDB): reads `key`
   * and arms a watch on it, which settles once a commit after that read
   * changes the key's value; a watch may also settle without a change, and
   * it settles when cancelled or when the store ends it. Idle, it costs the
   * store nothing. Absent where one process holds the store alone (LMDB,
   * whose directory lock admits one process), so that process knows every
   * commit itself.
   */
  watch?(key: Bytes): Promise<StoreWatch>;
  /**
   * A store of its own beside this one, by name, for data a background
   * writer keeps apart, so that its commits neither queue before this
   * store's nor share their fsyncs (LMDB, whose writer and file are one per
   * environment: an environment in a subdirectory, opened on first use,
   * compacted and closed with this one). Absent where commits of unrelated
   * keys are independent already (FoundationDB).
   */
  companion?(name: string): Store;
  /**
   * Lends the store's files to another thread of this process for reading
   * (`lmdb-lent.ts`): `read` opens them itself, and the store keeps them
   * in place (no compaction swaps the file) until it settles. Absent where
   * the store is not a file of this process (FoundationDB).
   */
  lendReader?<T>(read: (lease: StoreLease) => Promise<T>): Promise<T>;
  /**
   * Lends the store's single writer to another thread of this process
   * (`lmdb-lent.ts`): once every commit handed over before is durable, and
   * before any later transaction's body runs, `write` commits one
   * transaction of its own, durable when it settles, recording
   * `lease.sequence` as the store's commit sequence if it committed.
   * Absent where writers need no turn (FoundationDB).
   */
  lendWriter?<T>(write: (lease: StoreLease) => Promise<LentWrite<T>>): Promise<T>;
  /**
   * Asks the store to call `release` with its path, and wait for it, before
   * it closes its files or swaps them (a compaction): a thread it lends
   * them to keeps them open between leases (`lmdb-lent.ts`), and must have
   * closed them by then: kept past a swap, they would still be the replaced
   * file. Registering the same function again changes nothing. Absent where
   * nothing is lent (FoundationDB).
   */
  keepLent?(release: (path: string) => Promise<void>): void;
  /**
   * Tells the store when nothing else waits on this process (`alone`: the
   * HTTP server has one request in flight), so that a small commit with no
   * other under way may run on the calling thread rather than be handed to
   * a writer thread and back. Absent where a commit is not this process's
   * own work (FoundationDB).
   */
  commitInline?(alone: () => boolean): void;
}

/** Where a lent store's files are, and, to a lent writer, the commit sequence its commit records (a decimal: it crosses threads). */
export interface StoreLease {
  path: string;
  mapSize?: number;
  sequence?: string;
}

/** What a lent writer answers: its value, and whether it committed (the lease's sequence is then the store's). */
export interface LentWrite<T> {
  value: T;
  committed: boolean;
}

/** A watch armed by {@link Store.watch}. */
export interface StoreWatch {
  /** The key's value when the watch was armed. */
  value: Bytes | undefined;
  /** Settles true when the key may have changed, false when cancelled or ended by the store. */
  changed: Promise<boolean>;
  cancel(): void;
}

export type StoreErrorCode =
  /** The transaction conflicted with another and may be retried. */
  | 'conflict'
  /** The commit may or may not have applied; only idempotent bodies may be retried. */
  | 'commit_unknown'
  /** The transaction ran past its time limit, or one attempt past {@link STORE_LIMITS.transactionMs}. */
  | 'timeout'
  /** The store cannot be reached or is not serving. */
  | 'unavailable'
  /** A key, value or transaction is larger than {@link STORE_LIMITS} allow. */
  | 'too_large'
  /**
   * The store's disk had no room for the commit, and nothing of it was
   * written; its message names the directory. Writes succeed again once
   * there is room, without a restart; retrying at once does not help.
   */
  | 'no_space'
  /** The client library or its configuration is missing or wrong. */
  | 'not_configured'
  /** Anything else the backend reported. */
  | 'internal';

const RETRIABLE: ReadonlySet<StoreErrorCode> = new Set(['conflict', 'commit_unknown', 'unavailable']);

/** The one error a store raises; `retriable` says whether trying again may help. */
export class StoreError extends Error {
  readonly code: StoreErrorCode;
  readonly retriable: boolean;
  /** The backend's own error code, for logs (e.g. an FDB error number). */
  readonly backendCode: number | string | undefined;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown; backendCode?: number | string }) {
    super(message, { cause: options?.cause });
    this.name = 'StoreError';
    this.code = code;
    this.retriable = RETRIABLE.has(code);
    this.backendCode = options?.backendCode;
  }
}

/** Encodes a counter operand as {@link Transaction.add} expects it. */
export function encodeCounter(value: number | bigint): Bytes {
  const buf = Buffer.alloc(8);
  buf.writeBigInt64LE(BigInt.asIntN(64, BigInt(value)));
  return buf;
}

/** Reads a counter written by {@link Transaction.add}; absent is 0. */
export function decodeCounter(value: Bytes | undefined): bigint {
  if (value === undefined || value.length === 0) return 0n;
  const buf = Buffer.alloc(8);
  value.copy(buf, 0, 0, Math.min(8, value.length));
  return buf.readBigInt64LE();
}

/** The first key after every key that starts with `prefix`. */
export function prefixEnd(prefix: Bytes): Bytes {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] !== 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  throw new RangeError('A prefix of only 0xff bytes has no end key.');
}
