/**
 * The LMDB environment as another thread of the process that holds it sees
 * it, once the store has lent it (`LmdbStore.lendReader`, `lendWriter`):
 * the indexer's merge thread reads a batch and commits the batch's merge
 * here, so its thousands of keys and values never become objects on the
 * event loop's heap (where they outlived young-generation collections and
 * made every pause longer: `docs/performance.md`, issue 44, eleventh stop).
 *
 * lmdb-js shares one environment between the threads of a process that open
 * the same file (told apart by its inode). The thread opens it at its first
 * lease and keeps it open between leases; the store asks for it back
 * (`releaseLent`) before it closes or swaps the file, since one kept past a
 * swap would still be the replaced file's, and a lease keeps it from
 * swapping the file meanwhile.
 * A lent writer is the store's single writer for its lease: nothing else
 * writes the environment, so what it reads stays as read until it commits,
 * and its commit is one LMDB transaction, durable when it returns, that
 * records the commit sequence the lease names.
 *
 * @module
 */
import type { RootDatabase } from 'lmdb';
import { commitFailure } from './lmdb-errors.js';
import { commitSync, databasesOf, openEnvironment } from './lmdb-environment.js';
import { SnapshotReader } from './lmdb-reads.js';
import { MemoryTransaction } from './lmdb-transaction.js';
import { StoreError, type LentWrite, type StoreLease, type Transaction } from './store.js';

/**
 * A snapshot that holds every commit made before the lease: lmdb-js keeps
 * one read transaction a thread and renews it on a timer of its own, so the
 * one a lease before took (a millisecond ago, or longer on a busy thread)
 * may predate the store's commits since. A renewal costs a microsecond or two.
 */
function freshSnapshot(env: RootDatabase): ReturnType<RootDatabase['useReadTransaction']> {
  env.resetReadTxn();
  return env.useReadTransaction();
}

/** `body` over a snapshot of the lent environment, read-only. */
export async function readLent<T>(lease: StoreLease, body: (tx: Transaction) => Promise<T>): Promise<T> {
  return withEnvironment(lease, async (env, { data }) => {
    const snapshot = freshSnapshot(env);
    const tx = new MemoryTransaction(new SnapshotReader(data, snapshot), true);
    try {
      return await body(tx);
    } finally {
      tx.close();
      snapshot.done();
    }
  });
}

/**
 * `body` as one write transaction of the lent writer: it reads the
 * environment as it is (the lease admits no other writer), its writes are
 * committed in one LMDB transaction with the lease's commit sequence, and it
 * answers whether there was anything to commit. The commit is durable when
 * it answers, unless `derived`: work that a machine stopping before the
 * next commit may take back, to be done again (the indexer's merge: its
 * entries stay on the pending list until a merge lands); its meta page is
 * then flushed with the next commit (`commitSync`). A body may not stamp
 * keys with the commit (`setStamped`): nothing that runs here needs to.
 */
export async function writeLent<T>(lease: StoreLease, body: (tx: Transaction) => Promise<T>, derived = false): Promise<LentWrite<T>> {
  if (lease.sequence === undefined) throw new StoreError('internal', 'A lent writer needs the commit sequence of its lease.');
  const sequence = Buffer.alloc(8);
  sequence.writeBigUInt64BE(BigInt(lease.sequence));
  return withEnvironment(lease, async (env, databases) => {
    const snapshot = freshSnapshot(env);
    const tx = new MemoryTransaction(new SnapshotReader(databases.data, snapshot));
    let value: T;
    try {
      value = await body(tx);
      tx.limits.beforeCommit();
    } finally {
      tx.close();
      snapshot.done();
    }
    const { writes, stamped, blind } = tx.takeWrites();
    if (stamped.length > 0) throw new StoreError('internal', 'A lent writer cannot stamp keys with its commit.');
    if (writes.size === 0 && blind.length === 0) return { value, committed: false };
    try {
      commitSync(env, databases, writes, blind, sequence, !derived);
    } catch (error) {
      throw await commitFailure(error, lease.path);
    }
    return { value, committed: true };
  });
}

/** An environment this thread keeps open between leases, its databases, and the leases using it now. */
interface Kept {
  env: RootDatabase;
  databases: ReturnType<typeof databasesOf>;
  using: number;
  /** Called once no lease uses it: a release waits for that. */
  idle?: () => void;
}

/**
 * The environments this thread keeps open, by path: opened at a lease and
 * kept until the store that lent it asks for it back ({@link releaseLent}),
 * before it closes or swaps its file. Opening and closing one at each lease
 * cost ~1 ms of CPU, three times a merge batch, and made lmdb-js's write
 * functions afresh, to be optimized again (`docs/performance.md`, issue 44).
 */
const KEPT = new Map<string, Kept>();

async function withEnvironment<T>(lease: StoreLease, use: (env: RootDatabase, databases: Kept['databases']) => Promise<T>): Promise<T> {
  let kept = KEPT.get(lease.path);
  if (kept === undefined) {
    let env: RootDatabase;
    try {
      env = openEnvironment(lease);
    } catch (error) {
      throw new StoreError('unavailable', 'The LMDB environment lent to this thread could not be opened.', { cause: error });
    }
    kept = { env, databases: databasesOf(env), using: 0 };
    KEPT.set(lease.path, kept);
  }
  kept.using += 1;
  try {
    return await use(kept.env, kept.databases);
  } finally {
    kept.using -= 1;
    if (kept.using === 0) kept.idle?.();
  }
}

/**
 * Closes the environment at `path` if this thread keeps it open, once no
 * lease uses it: the store that lent it is about to close or swap its file
 * (`LmdbStore.keepLent`). A later lease opens it again.
 */
export async function releaseLent(path: string): Promise<void> {
  const kept = KEPT.get(path);
  if (kept === undefined) return;
  KEPT.delete(path);
  if (kept.using > 0) await new Promise<void>((resolve) => (kept.idle = resolve));
  await kept.env.close();
}
