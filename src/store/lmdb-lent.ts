/**
 * The LMDB environment as another thread of the process that holds it sees
 * it, once the store has lent it (`LmdbStore.lendReader`, `lendWriter`):
 * the indexer's merge thread reads a batch and commits the batch's merge
 * here, so its thousands of keys and values never become objects on the
 * event loop's heap (where they outlived young-generation collections and
 * made every pause longer: `docs/performance.md`, issue 44, eleventh stop).
 *
 * lmdb-js shares one environment between the threads of a process that open
 * the same path, so the thread opens it for each lease and closes it before
 * the lease ends; a lease keeps the store from swapping the file meanwhile.
 * A lent writer is the store's single writer for its lease: nothing else
 * writes the environment, so what it reads stays as read until it commits,
 * and its commit is one LMDB transaction, durable when it returns, that
 * records the commit sequence the lease names.
 *
 * @module
 */
import type { Database, RootDatabase } from 'lmdb';
import { commitFailure } from './lmdb-errors.js';
import { databasesOf, openEnvironment, SEQUENCE_KEY } from './lmdb-environment.js';
import { SnapshotReader } from './lmdb-reads.js';
import { MemoryTransaction } from './lmdb-transaction.js';
import { StoreError, type LentWrite, type StoreLease, type Transaction } from './store.js';

/** `body` over a snapshot of the lent environment, read-only. */
export async function readLent<T>(lease: StoreLease, body: (tx: Transaction) => Promise<T>): Promise<T> {
  return withEnvironment(lease, async (env) => {
    const { data } = databasesOf(env);
    const snapshot = env.useReadTransaction();
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
 * committed in one durable LMDB transaction with the lease's commit
 * sequence, and it answers whether there was anything to commit. A body
 * may not stamp keys with the commit (`setStamped`): nothing that runs here needs to.
 */
export async function writeLent<T>(lease: StoreLease, body: (tx: Transaction) => Promise<T>): Promise<LentWrite<T>> {
  if (lease.sequence === undefined) throw new StoreError('internal', 'A lent writer needs the commit sequence of its lease.');
  const sequence = Buffer.alloc(8);
  sequence.writeBigUInt64BE(BigInt(lease.sequence));
  return withEnvironment(lease, async (env) => {
    const { data, meta } = databasesOf(env);
    const snapshot = env.useReadTransaction();
    const tx = new MemoryTransaction(new SnapshotReader(data, snapshot));
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
      env.transactionSync(() => {
        writes.forEach(writeOne, data);
        for (const { key, value: written } of blind) {
          if (written === null) data.removeSync(key);
          else data.putSync(key, written);
        }
        meta.putSync(SEQUENCE_KEY, sequence);
      });
    } catch (error) {
      throw await commitFailure(error, lease.path);
    }
    return { value, committed: true };
  });
}

/**
 * One write of a lent transaction into `this`, the environment's data: a
 * module function, not a callback made at each commit, whose optimized code
 * a collection between batches cleared, to be optimized again each batch.
 */
function writeOne(this: Database<Buffer, Buffer>, { key, value }: { key: Buffer; value: Buffer | null }): void {
  if (value === null) this.removeSync(key);
  else this.putSync(key, value);
}

async function withEnvironment<T>(lease: StoreLease, use: (env: RootDatabase) => Promise<T>): Promise<T> {
  let env: RootDatabase;
  try {
    env = openEnvironment(lease);
  } catch (error) {
    throw new StoreError('unavailable', 'The LMDB environment lent to this thread could not be opened.', { cause: error });
  }
  try {
    return await use(env);
  } finally {
    await env.close();
  }
}
