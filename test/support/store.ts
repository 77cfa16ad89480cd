/**
 * The store the HTTP and service suites run on: a fresh LMDB directory by
 * default, or, with `BATON_TEST_STORE=fdb` (`npm run test:fdb`), a fresh key
 * prefix on the FoundationDB cluster of `FDB_CLUSTER_FILE`. Each test gets
 * its own and `destroy` removes what it wrote, so the suites run unchanged
 * on either store.
 */
import { randomUUID } from 'node:crypto';
import type { Store, StoreHooks } from '../../src/store/store.js';
import { LmdbStore } from '../../src/store/lmdb.js';

export interface TestStore {
  store: Store;
  /** Opens the same data again (the directory, or the same key prefix): a restart, after `store` was closed. */
  reopen(): Promise<Store>;
  /** Closes the store and removes every key it wrote (the directory is the caller's). */
  destroy(): Promise<void>;
}

/** Which store the suites run on, and why not FoundationDB when it cannot be. */
export const TEST_STORE = process.env.BATON_TEST_STORE === 'fdb' ? 'fdb' : 'lmdb';

export async function openTestStore(dir: string, hooks: StoreHooks = {}): Promise<TestStore> {
  if (TEST_STORE === 'lmdb') {
    const store = LmdbStore.open({ path: dir, hooks });
    return { store, reopen: async () => LmdbStore.open({ path: dir, hooks }), destroy: () => store.close() };
  }
  const clusterFile = process.env.FDB_CLUSTER_FILE;
  if (!clusterFile) throw new Error('BATON_TEST_STORE=fdb runs the suites on FoundationDB and needs FDB_CLUSTER_FILE naming a reachable cluster.');
  const { FdbStore } = await import('../../src/store/fdb.js');
  const prefix = `test-${randomUUID()}`;
  const store = await FdbStore.open({ clusterFile, prefix, hooks });
  return {
    store,
    reopen: () => FdbStore.open({ clusterFile, prefix, hooks }),
    async destroy() {
      await store.close();
      const root = await FdbStore.open({ clusterFile, prefix: '' });
      // The suites' own transactions go through the service's runner; clearing a test's prefix is the harness's.
      await root.transact(async (tx) => tx.clearPrefix(Buffer.from(prefix)));
      await root.close();
    },
  };
}
