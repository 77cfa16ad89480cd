/**
 * The embedded default store, on LMDB (`lmdb`).
 *
 * One process owns a data directory. Transaction bodies run one at a time (a
 * single writer), which makes every transaction serializable without conflict
 * checks. A finished body's writes join a pending overlay that later bodies
 * read through, and are handed to LMDB, which commits every write queued in
 * the same event turn in one durable transaction (group commit): one fsync for
 * many transactions. A transaction resolves only once its commit, and every
 * commit before it, is on disk; a body that read the overlay therefore never
 * acknowledges data that could still be lost.
 *
 * @module
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, RootDatabase, Transaction as ReadTransaction } from 'lmdb';
import type { DirectoryLock } from '../fs/dir-lock.js';
import { withinDeadline } from './limits.js';
import { commitFailure, quietOrphanedCommits } from './lmdb-errors.js';
import { ReadGate, removeUnfinishedCopy, replaceWithCopy, writeCompactedCopy } from './lmdb-compact.js';
import { CommitWindow } from './lmdb-commit-window.js';
import { commitSync, databasesOf, openEnvironment, SEQUENCE_KEY } from './lmdb-environment.js';
import { PendingOverlay, type PendingWrite } from './lmdb-pending.js';
import { copyOf, readFast, readRange, SnapshotReader } from './lmdb-reads.js';
import { MemoryTransaction, type PendingReader } from './lmdb-transaction.js';
import {
  COMMIT_STAMP_BYTES,
  DEFAULT_TRANSACT_OPTIONS,
  StoreError,
  type Bytes,
  type LentWrite,
  type Store,
  type StoreLease,
  type StoreHooks,
  type TransactOptions,
  type TransactionBody,
} from './store.js';

export interface LmdbStoreOptions {
  /** Directory of the LMDB environment; created when missing. */
  path: string;
  /** Upper bound of the memory map, in bytes (LMDB grows the file up to it). */
  mapSize?: number;
  hooks?: StoreHooks;
  /** This process's hold on the directory (`fs/dir-lock.ts`), released when the store closes. */
  lock?: DirectoryLock;
  /**
   * How long a commit may wait for the commits of other write transactions
   * under way to share it (`lmdb-commit-window.ts`); 0 commits each at once.
   */
  commitWindowMs?: number;
}

/** The most transactions one held commit gathers before it starts. */
const WINDOW_MAX_PARTS = 256;
/** The most writes a commit run on the calling thread holds (a create writes about a dozen; a purge's page, hundreds). */
const INLINE_MAX_WRITES = 64;

/** One transaction's writes, as a commit takes them. */
interface CommitPart {
  writes: PendingWrites;
  blind: PendingWrite[];
}

/** A transaction's writes by key: `null` marks a removal. */
type PendingWrites = Map<string, PendingWrite>;

export class LmdbStore implements Store, PendingReader {
  readonly name = 'lmdb' as const;
  private readonly hooks: StoreHooks;
  private readonly options: LmdbStoreOptions;
  // Opened again after a compaction replaces the file under them.
  private env: RootDatabase;
  private data!: Database<Buffer, Buffer>;
  private meta!: Database<Buffer, Buffer>;
  private readonly pending = new PendingOverlay();
  /** The tail of the chain that runs bodies one at a time. */
  private turn: Promise<void> = Promise.resolve();
  /** The last commit handed to LMDB; later transactions resolve after it. */
  private lastCommit: Promise<void> = Promise.resolve();
  private sequence: bigint;
  /** The newest commit sequence whose transaction has resolved; every snapshot must hold it. */
  private acknowledged: bigint;
  private closed = false;
  /** Set by a failed commit: later transactions may have read its writes, so the store stops (or, out of space, recovers: `recover`). */
  private failure: StoreError | undefined;
  /** The sequence of the first commit that failed since the store last recovered. */
  private failedFrom: bigint | undefined;
  /** A commit after `failedFrom` landed having read a write of it or of a later commit: the store cannot recover without a restart. */
  private tainted = false;
  /** Reads pass it, so that a compaction closes the environment under none. */
  private readonly readers = new ReadGate();
  /** Write transactions under way: from the start of their turn to their answer. */
  private writers = 0;
  /** Writers under way that have joined the commit window (their writes handed to it) and wait for them to be durable; not `handedOver`, which counts commits. */
  private joined = 0;
  /** Commits handed to lmdb-js's writer thread and not yet settled. */
  private handedOver = 0;
  /** Whether nothing else waits on the process (`commitInline`). */
  private alone: (() => boolean) | undefined;
  private readonly window: CommitWindow<CommitPart>;
  /** What threads that keep the environment open between leases close it with (`keepLent`). */
  private readonly keepers = new Set<(path: string) => Promise<void>>();
  /** Environments of their own in subdirectories (`companion`), by name. */
  private readonly companions = new Map<string, LmdbStore>();

  private constructor(env: RootDatabase, options: LmdbStoreOptions) {
    this.env = env;
    this.options = options;
    this.hooks = options.hooks ?? {};
    this.window = new CommitWindow<CommitPart>({
      windowMs: options.commitWindowMs ?? 0,
      maxParts: WINDOW_MAX_PARTS,
      commit: (parts, first, last) => this.commit(parts, first, last),
      waiting: () => this.writers - this.joined,
    });
    this.attach(env);
    const stored = this.meta.get(SEQUENCE_KEY);
    this.sequence = stored === undefined ? 0n : Buffer.from(stored).readBigUInt64BE();
    this.acknowledged = this.sequence;
  }

  static open(options: LmdbStoreOptions): LmdbStore {
    mkdirSync(options.path, { recursive: true });
    quietOrphanedCommits();
    try {
      removeUnfinishedCopy(options.path);
      return new LmdbStore(openEnvironment(options), options);
    } catch (error) {
      throw new StoreError('unavailable', 'The LMDB data directory could not be opened.', { cause: error });
    }
  }

  private attach(env: RootDatabase): void {
    this.env = env;
    ({ data: this.data, meta: this.meta } = databasesOf(env));
  }

  /**
   * A single writer in one process: a commit either resolved or failed, never
   * both; only the test hook that pretends otherwise makes the outcome unknown.
   */
  get commitOutcomeKnown(): boolean {
    return this.hooks.commitOutcomeUnknown === undefined;
  }

  async transact<T>(body: TransactionBody<T>, options?: TransactOptions): Promise<T> {
    const { timeoutMs, maxRetries, readOnly, background } = { ...DEFAULT_TRANSACT_OPTIONS, ...options };
    const deadline = Date.now() + timeoutMs;
    if (readOnly) return this.read(body, deadline);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attempt(body, deadline, background);
      } catch (error) {
        if (!(error instanceof StoreError) || !error.retriable || attempt >= maxRetries || Date.now() >= deadline) {
          throw error;
        }
        await backoff(attempt);
      }
    }
  }

  /**
   * A read-only body runs at once on an LMDB read snapshot, beside the writer.
   * LMDB makes a commit visible only once it is flushed (`overlappingSync`
   * off), so the snapshot holds every acknowledged write and nothing that a
   * crash could still take back.
   */
  private async read<T>(body: TransactionBody<T>, deadline: number): Promise<T> {
    await this.readers.enter();
    try {
      if (this.closed) throw new StoreError('unavailable', 'The store is closed.');
      return await this.readSnapshot(body, deadline);
    } finally {
      this.readers.leave();
    }
  }

  private async readSnapshot<T>(body: TransactionBody<T>, deadline: number): Promise<T> {
    let snapshot = this.env.useReadTransaction();
    // lmdb-js shares one read transaction and renews it lazily; one that
    // predates the last acknowledged commit is renewed before it is used.
    if (this.sequenceIn(snapshot) < this.acknowledged) {
      snapshot.done();
      this.env.resetReadTxn();
      snapshot = this.env.useReadTransaction();
    }
    const tx = new MemoryTransaction(new SnapshotReader(this.data, snapshot), true);
    try {
      return await withinDeadline(body(tx), tx.limits.deadline(deadline));
    } finally {
      tx.close();
      snapshot.done();
      tx.resolveStamp(null);
      this.report(tx, true, false);
    }
  }

  /** A background transaction does not count among the writers under way: none waits for it. */
  private async attempt<T>(body: TransactionBody<T>, deadline: number, background: boolean): Promise<T> {
    if (background) return this.attemptOnce(body, deadline, true);
    this.writers += 1;
    try {
      return await this.attemptOnce(body, deadline, false);
    } finally {
      this.writers -= 1;
      this.window.settle();
    }
  }

  /** Waits for the writer's turn (bodies run one at a time) and answers how to hand it on; a closed or stopped store refuses first. */
  private async writerTurn(): Promise<() => void> {
    if (this.closed) throw new StoreError('unavailable', 'The store is closed.');
    if (this.failure && this.failure.code !== 'no_space') throw new StoreError('unavailable', 'The store stopped after a failed commit; restart the service.');
    return this.nextTurn();
  }

  /** Waits for the writer's turn, whatever the store's state, and answers how to hand it on. */
  private async nextTurn(): Promise<() => void> {
    const previous = this.turn;
    let release!: () => void;
    this.turn = new Promise((resolve) => (release = resolve));
    await previous;
    return release;
  }

  private async attemptOnce<T>(body: TransactionBody<T>, deadline: number, background: boolean): Promise<T> {
    const release = await this.writerTurn();
    try {
      // A background body reads only what is durable: the commits before it settle first, in its turn, so it never
      // reads the writes of one that then fails (a merge on the event loop lists creates' pending entries; had it read
      // those of a commit refused for want of room and landed itself, the store would stop until a restart).
      if (background) await this.settled();
      if (this.failedFrom !== undefined) await this.recover();
    } catch (error) {
      release();
      throw error;
    }

    const tx = new MemoryTransaction(this);
    let result: T;
    this.pending.startReads();
    try {
      result = await withinDeadline(body(tx), tx.limits.deadline(deadline));
      tx.limits.beforeCommit();
    } catch (error) {
      tx.close();
      release();
      this.report(tx, false, false);
      throw error;
    }
    tx.close();

    const { writes, stamped, blind } = tx.takeWrites();
    if (writes.size === 0 && stamped.length === 0 && blind.length === 0) {
      release();
      // A read-only body may have read writes that are not yet durable.
      await this.lastCommit;
      tx.resolveStamp(null);
      this.report(tx, false, false);
      return result;
    }

    this.sequence += 1n;
    const stamp = Buffer.alloc(COMMIT_STAMP_BYTES);
    stamp.writeBigUInt64BE(this.sequence);
    for (const { prefix, suffix, value } of stamped) {
      const key = Buffer.concat([prefix, stamp, suffix]);
      writes.set(key.toString('latin1'), { key, value });
    }
    const sequence = this.sequence;
    const readsFrom = this.pending.readsFrom();
    // Held only while other callers' writes are still to come or a commit is in flight; a background commit joins a window open but opens none.
    if (!background) this.joined += 1;
    const done = this.window.add({ writes, blind }, sequence, background);
    this.pending.addAll(writes, sequence);
    const before = this.lastCommit;
    this.lastCommit = done.catch(() => undefined);
    release();

    try {
      await before;
      await done;
    } catch (error) {
      this.report(tx, false, false);
      throw error;
    } finally {
      if (!background) this.joined -= 1;
      this.pending.removeAll(writes);
    }
    // Landed after a commit that failed, having read that commit's writes (or a later one's) from the overlay: the file now holds a write made from state that is not there.
    if (this.failedFrom !== undefined && readsFrom >= this.failedFrom) this.tainted = true;
    if (sequence > this.acknowledged) this.acknowledged = sequence;
    tx.resolveStamp(stamp);
    this.report(tx, false, true);
    if (this.hooks.commitOutcomeUnknown?.() === true) {
      // Retriable, so the loop in `transact` runs the body again, as FoundationDB's does after 1021.
      throw new StoreError('commit_unknown', 'The commit outcome was reported unknown by a test hook.');
    }
    return result;
  }

  /**
   * Lends the environment to another thread for reading (`lmdb-lent.ts`):
   * the read gate is held meanwhile, so a compaction does not close the
   * environment or swap its file under the thread.
   */
  async lendReader<T>(read: (lease: StoreLease) => Promise<T>): Promise<T> {
    await this.readers.enter();
    try {
      if (this.closed) throw new StoreError('unavailable', 'The store is closed.');
      return await read(this.lease());
    } finally {
      this.readers.leave();
    }
  }

  /**
   * Lends the single writer to another thread (`lmdb-lent.ts`), in this
   * store's turn: no body runs meanwhile, and every commit handed to LMDB
   * before is durable first, so the environment holds exactly what every
   * transaction before wrote, and the pending overlay is empty. The thread
   * commits one LMDB transaction itself, recording the next commit
   * sequence; once it has, later snapshots are renewed to hold it.
   */
  async lendWriter<T>(write: (lease: StoreLease) => Promise<LentWrite<T>>): Promise<T> {
    const release = await this.writerTurn();
    try {
      if (this.closed) throw new StoreError('unavailable', 'The store is closed.');
      if (this.failedFrom !== undefined) await this.recover();
      await this.settled();
      if (this.failure) throw this.failure;
      const sequence = this.sequence + 1n;
      let lent: LentWrite<T>;
      try {
        lent = await write({ ...this.lease(), sequence: sequence.toString() });
      } catch (error) {
        // A thread that failed after its commit landed (it exited before answering): the file's sequence says so.
        this.env.resetReadTxn();
        const stored = copyOf(this.meta.get(SEQUENCE_KEY));
        if (stored !== undefined && stored.readBigUInt64BE() === sequence) this.landed(sequence);
        throw error;
      }
      if (lent.committed) this.landed(sequence);
      return lent.value;
    } finally {
      release();
    }
  }

  keepLent(release: (path: string) => Promise<void>): void {
    this.keepers.add(release);
  }

  /**
   * Has every thread that keeps the environment open close it: one kept
   * open past a swap would still be the replaced file's (lmdb-js tells
   * environments apart by the file's inode), and that thread would go on
   * merging into it. A thread that cannot answer (it failed) holds nothing:
   * its environments closed with it.
   */
  private async releaseLent(): Promise<void> {
    for (const release of this.keepers) await release(this.options.path).catch(() => undefined);
  }

  /** Every commit handed to LMDB has settled, landed or failed: the pending overlay is empty. Called in the writer's turn (or once no turn is left: `close`). */
  private async settled(): Promise<void> {
    this.window.flush();
    await this.lastCommit;
  }

  /** A lent writer's commit `sequence` landed. */
  private landed(sequence: bigint): void {
    this.sequence = sequence;
    this.acknowledged = sequence;
    // lmdb-js renews its shared read transaction after its own commits only: a write body reads the thread's commit from here on.
    this.env.resetReadTxn();
  }

  private lease(): StoreLease {
    return { path: this.options.path, ...(this.options.mapSize !== undefined ? { mapSize: this.options.mapSize } : {}) };
  }

  /**
   * After a commit failed for want of space, writes go on once every commit
   * handed to LMDB has settled, provided none that landed after the failed
   * one read anything of it (or of a later commit) from the overlay: the
   * file then holds exactly the commits that were acknowledged, each made
   * from state the file holds, and the next commit follows the last of them.
   * Commits of other tasks handed to LMDB beside the failed one (several
   * writers when the disk fills) read nothing of it and may land: they are
   * kept. Runs in the writer's turn.
   */
  private async recover(): Promise<void> {
    await this.lastCommit;
    const failedFrom = this.failedFrom;
    const failure = this.failure;
    if (failedFrom === undefined) return;
    if (failure === undefined || failure.code !== 'no_space') throw new StoreError('unavailable', 'The store stopped after a failed commit; restart the service.');
    if (this.tainted) {
      this.failure = new StoreError('unavailable', 'A commit that read the writes of a failed one landed; the store stopped: restart the service and verify the audit chains.');
      throw this.failure;
    }
    this.env.resetReadTxn();
    const stored = copyOf(this.meta.get(SEQUENCE_KEY));
    this.sequence = stored === undefined ? 0n : stored.readBigUInt64BE();
    this.failedFrom = undefined;
    this.failure = undefined;
  }

  private report(tx: MemoryTransaction, readOnly: boolean, committed: boolean): void {
    this.hooks.onTransaction?.({ ...tx.stats(), readOnly, committed });
  }

  private sequenceIn(snapshot: ReadTransaction): bigint {
    const bytes = copyOf(readFast(this.meta, SEQUENCE_KEY, snapshot));
    return bytes === undefined ? 0n : bytes.readBigUInt64BE();
  }

  commitInline(alone: () => boolean): void {
    this.alone = alone;
  }

  /** One LMDB commit of the parts (transactions `first` to `last`, in order). */
  private commit(parts: CommitPart[], first: bigint, last: bigint): Promise<void> {
    const sequenceBytes = Buffer.alloc(8);
    sequenceBytes.writeBigUInt64BE(last);
    if (this.inlineFits(parts)) return this.commitHere(parts[0]!, first, sequenceBytes);
    this.handedOver += 1;
    // A batch runs entirely on LMDB's write thread and lands in one LMDB
    // transaction with every other write of this event turn; a transaction
    // callback would instead wait for the main thread, which is busy serving.
    return this.env
      .batch(() => {
        for (const { writes, blind } of parts) {
          writes.forEach(({ key, value }) => {
            if (value === null) void this.data.remove(key);
            else void this.data.put(key, value);
          });
          // Blind writes join the same LMDB transaction but not the pending overlay: no writer reads them.
          for (const { key, value } of blind) {
            if (value === null) void this.data.remove(key);
            else void this.data.put(key, value);
          }
        }
        void this.meta.put(SEQUENCE_KEY, sequenceBytes);
      })
      .then(
        () => {
          this.handedOver -= 1;
        },
        async (error: unknown) => {
          this.handedOver -= 1;
          throw await this.failed(error, first);
        },
      );
  }

  /**
   * Whether a commit may run on this thread: one transaction's few writes,
   * no other write transaction under way nor commit handed over, and
   * nothing else waiting on the process. A lone create then answers without
   * two hand-offs between threads (one caller: ~10 % more creates a second,
   * `docs/performance.md`, issue 44); the thread waits on the fsync
   * meanwhile, which beside other requests would hold them up (the open
   * loop's reads waited 18–29 ms at p50 when every commit alone in the
   * store ran here).
   */
  private inlineFits(parts: CommitPart[]): boolean {
    if (parts.length !== 1 || this.writers > 1 || this.handedOver > 0 || this.alone?.() !== true) return false;
    const { writes, blind } = parts[0]!;
    return writes.size + blind.length <= INLINE_MAX_WRITES;
  }

  /** One transaction's writes committed on this thread, durable when it returns. */
  private commitHere({ writes, blind }: CommitPart, first: bigint, sequenceBytes: Buffer): Promise<void> {
    try {
      commitSync(this.env, { data: this.data, meta: this.meta }, writes, blind, sequenceBytes);
    } catch (error) {
      return this.failed(error, first).then((failure) => Promise.reject(failure));
    }
    return Promise.resolve();
  }

  /** Records a failed commit of the transactions from `first`: what the store answers from now on, until it recovers. */
  private async failed(error: unknown, first: bigint): Promise<StoreError> {
    this.failedFrom ??= first;
    const failure = await commitFailure(error, this.options.path, this.failure);
    this.failure ??= failure;
    return failure;
  }

  pendingValue(keyId: string): Bytes | null | undefined {
    return this.pending.value(keyId);
  }

  pendingRange(begin: Bytes, end: Bytes): Map<string, PendingWrite> {
    return this.pending.range(begin, end);
  }

  committedValue(key: Bytes): Bytes | undefined {
    return copyOf(readFast(this.data, key));
  }

  committedRange(begin: Bytes, end: Bytes, reverse: boolean): Iterable<{ key: Bytes; value: Bytes }> {
    return readRange(this.data, begin, end, reverse);
  }

  async ping(): Promise<void> {
    await this.readers.enter();
    try {
      if (this.closed) throw new StoreError('unavailable', 'The store is closed.');
      // One real read of the meta database, where the commit sequence lives: the environment answers.
      this.meta.get(SEQUENCE_KEY);
    } finally {
      this.readers.leave();
    }
  }

  /**
   * Replaces `data.mdb` with a compacted copy of itself (`lmdb-compact.ts`):
   * writes wait while the copy is made, reads only while the file is swapped
   * and the environment opened again. Its companions are compacted after it.
   */
  async compact(): Promise<boolean> {
    if (this.closed) throw new StoreError('unavailable', 'The store is closed.');
    const release = await this.nextTurn();
    try {
      await this.settled();
      if (this.failure) throw this.failure;
      const databases = new Map([
        ['data', this.data],
        ['meta', this.meta],
      ]);
      await writeCompactedCopy(databases, this.options.path, (path) => openEnvironment({ ...this.options, path }));
      await this.swap();
    } catch (error) {
      throw error instanceof StoreError ? error : new StoreError('unavailable', 'The LMDB compaction failed.', { cause: error });
    } finally {
      release();
    }
    for (const companion of this.companions.values()) await companion.compact();
    return true;
  }

  /**
   * The environment `name` in this one's directory: its own writer, commit
   * window and file, under this store's directory lock. Opened once, on
   * first use; compacted after this one and closed with it.
   */
  companion(name: string): Store {
    if (this.closed) throw new StoreError('unavailable', 'The store is closed.');
    let store = this.companions.get(name);
    if (store === undefined) {
      store = LmdbStore.open({
        path: join(this.options.path, name),
        ...(this.options.mapSize !== undefined ? { mapSize: this.options.mapSize } : {}),
        ...(this.options.commitWindowMs !== undefined ? { commitWindowMs: this.options.commitWindowMs } : {}),
      });
      this.companions.set(name, store);
    }
    return store;
  }

  /** Closes the environment once no read is in progress, puts the copy in place, and opens it. */
  private async swap(): Promise<void> {
    try {
      await this.readers.hold();
      await this.releaseLent();
      await this.env.close();
      try {
        replaceWithCopy(this.options.path);
      } finally {
        // Whether or not the rename landed, the directory holds a whole store to open again.
        this.attach(openEnvironment(this.options));
      }
    } catch (error) {
      const failure = new StoreError('unavailable', 'The LMDB compaction failed.', { cause: error });
      this.failure ??= failure;
      throw failure;
    } finally {
      this.readers.release();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.turn;
    await this.settled();
    await this.releaseLent();
    this.keepers.clear();
    await this.env.close();
    for (const companion of this.companions.values()) await companion.close();
    await this.options.lock?.release();
  }
}

function backoff(attempt: number): Promise<void> {
  const ceiling = Math.min(1_000, 10 * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}
