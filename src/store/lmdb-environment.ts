/**
 * How the LMDB store opens its environment, and where it keeps its commit
 * sequence: shared by the store (`lmdb.ts`) and by a thread it lends the
 * environment to (`lmdb-lent.ts`), which must open it exactly alike.
 *
 * @module
 */
import { open, type Database, type RootDatabase } from 'lmdb';

/** The key, in the `meta` database, of the last commit's sequence. */
export const SEQUENCE_KEY = Buffer.from('commit-sequence');

export function openEnvironment(options: { path: string; mapSize?: number }): RootDatabase {
  return open({
    path: options.path,
    // The path is always a directory, even when its name has a dot in it.
    noSubdir: false,
    maxDbs: 4,
    mapSize: options.mapSize ?? 64 * 1024 ** 3,
    // Each commit is flushed before its promise resolves: an acknowledged
    // write survives a crash of the process or the machine.
    overlappingSync: false,
    noSync: false,
    compression: false,
  });
}

/** The environment's two databases: the keys and values, and the commit sequence. */
export function databasesOf(env: RootDatabase): { data: Database<Buffer, Buffer>; meta: Database<Buffer, Buffer> } {
  return {
    data: env.openDB<Buffer, Buffer>({ name: 'data', keyEncoding: 'binary', encoding: 'binary' }),
    meta: env.openDB<Buffer, Buffer>({ name: 'meta', keyEncoding: 'binary', encoding: 'binary' }),
  };
}

/** A write of a commit: `null` removes the key. */
interface CommitWrite {
  key: Buffer;
  value: Buffer | null;
}

/** lmdb-js's flags of a synchronous transaction: abortable, committed before it returns. */
const SYNC_TRANSACTION = 3;
/** LMDB's `MDB_NOMETASYNC` as a transaction's flag: its meta page is written, and flushed with the next commit's pages. */
const NO_META_SYNC = 0x40000;

/**
 * Commits `writes`, then `blind`, with the commit `sequence`, as one LMDB
 * transaction on the calling thread: the store's lone commits (`lmdb.ts`,
 * `commitInline`) and a lent writer's (`lmdb-lent.ts`). Durable when it
 * returns, unless `metaSync` is false: then its pages are flushed before its
 * meta page is written (so no crash can leave a meta page naming pages not
 * on disk), and the meta page is flushed with the next commit's pages; a
 * machine that stops before any later commit comes back with the
 * environment as it was before this one. One flush instead of two (a flush
 * costs ~4 ms on some disks): for commits whose loss at a power cut only
 * means work done again, never an answer taken back.
 */
export function commitSync(env: RootDatabase, { data, meta }: ReturnType<typeof databasesOf>, writes: ReadonlyMap<string, CommitWrite>, blind: readonly CommitWrite[], sequence: Buffer, metaSync = true): void {
  env.transactionSync(
    () => {
      writes.forEach(writeOne, data);
      blind.forEach(writeOne, data);
      meta.putSync(SEQUENCE_KEY, sequence);
    },
    (metaSync ? SYNC_TRANSACTION : SYNC_TRANSACTION | NO_META_SYNC) as Parameters<RootDatabase['transactionSync']>[1],
  );
}

/**
 * One write into `this`, the environment's data: a module function, not a
 * callback made at each commit, whose optimized code a collection between
 * a thread's batches cleared, to be optimized again each batch.
 */
function writeOne(this: Database<Buffer, Buffer>, { key, value }: CommitWrite): void {
  if (value === null) this.removeSync(key);
  else this.putSync(key, value);
}
