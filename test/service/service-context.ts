/**
 * A service context over a real LMDB store in a fresh temporary directory,
 * for calling service functions without HTTP, with every finished
 * transaction recorded through the store's own counters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceContext } from '../../src/service/context.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import type { FinishedTransaction, StoreHooks } from '../../src/store/store.js';

export interface ServiceHarness {
  ctx: ServiceContext;
  store: LmdbStore;
  /** Every transaction attempt the store finished, in order. */
  finished: FinishedTransaction[];
  close(): Promise<void>;
}

export function serviceHarness(hooks: Omit<StoreHooks, 'onTransaction'> = {}): ServiceHarness {
  const dir = mkdtempSync(join(tmpdir(), 'baton-service-'));
  const finished: FinishedTransaction[] = [];
  const store = LmdbStore.open({ path: dir, hooks: { ...hooks, onTransaction: (done) => finished.push(done) } });
  const ctx = standaloneContext(store);
  return {
    ctx,
    store,
    finished,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
