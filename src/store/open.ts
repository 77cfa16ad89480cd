/**
 * The one place a store is chosen.
 *
 * @module
 */
import type { Config } from '../config.js';
import { lockDirectory } from '../fs/dir-lock.js';
import type { Store } from './store.js';
import { LmdbStore } from './lmdb.js';

/**
 * A store lent to another thread of this process (`Store.lendReader`,
 * `lendWriter`), as that thread reads and writes it, and gives it back
 * (`Store.keepLent`): only LMDB lends itself.
 */
export { readLent, releaseLent, writeLent } from './lmdb-lent.js';

export type StoreConfig = Pick<Config, 'store' | 'dataDir' | 'fdbClusterFile' | 'fdbPrefix'> & Partial<Pick<Config, 'commitWindowMs'>>;

/** Opens the configured store; the FoundationDB binding is loaded only when chosen. */
export async function openStore(config: StoreConfig): Promise<Store> {
  if (config.store === 'fdb') {
    const { FdbStore } = await import('./fdb.js');
    return FdbStore.open({ clusterFile: config.fdbClusterFile, prefix: config.fdbPrefix });
  }
  // One data directory, one process: a second Baton on it would lose and duplicate acknowledged writes.
  const lock = await lockDirectory(config.dataDir, 'The data directory');
  try {
    return LmdbStore.open({ path: config.dataDir, lock, commitWindowMs: config.commitWindowMs });
  } catch (error) {
    await lock.release();
    throw error;
  }
}
