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
import type { FinishedTransaction, Store, StoreHooks } from '../../src/store/store.js';
import { openTestStore } from '../support/store.js';

export interface ServiceHarness {
  ctx: ServiceContext;
  store: Store;
  /** Every transaction attempt the store finished, in order. */
  finished: FinishedTransaction[];
  close(): Promise<void>;
}

export async function serviceHarness(hooks: Omit<StoreHooks, 'onTransaction'> = {}): Promise<ServiceHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-service-'));
  const finished: FinishedTransaction[] = [];
  const { store, destroy } = await openTestStore(dir, { ...hooks, onTransaction: (done) => finished.push(done) });
  const ctx = standaloneContext(store);
  return {
    ctx,
    store,
    finished,
    async close() {
      await destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
