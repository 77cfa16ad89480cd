/**
 * A service context over a real LMDB store in a fresh temporary directory,
 * for calling service functions without HTTP, with every finished
 * transaction recorded through the store's own counters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMetrics } from '../../src/metrics.js';
import type { ServiceContext } from '../../src/service/context.js';
import { EventNotifier } from '../../src/service/events.js';
import { integrityRecorder } from '../../src/service/integrity.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import type { FinishedTransaction, StoreHooks } from '../../src/store/store.js';

export interface ServiceHarness {
  ctx: ServiceContext;
  store: LmdbStore;
  /** Every transaction attempt the store finished, in order. */
  finished: FinishedTransaction[];
  close(): Promise<void>;
}

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function serviceHarness(hooks: Omit<StoreHooks, 'onTransaction'> = {}): ServiceHarness {
  const dir = mkdtempSync(join(tmpdir(), 'baton-service-'));
  const finished: FinishedTransaction[] = [];
  const store = LmdbStore.open({ path: dir, hooks: { ...hooks, onTransaction: (done) => finished.push(done) } });
  const ctx: ServiceContext = {
    store,
    metrics: createMetrics(),
    log: silent,
    notifier: new EventNotifier(),
    integrity: integrityRecorder,
    signer: undefined,
    maxCheckpointBytes: 1024 * 1024,
    breaker: { attempts: 3, windowMs: 3_600_000 },
    eventSource: '/baton',
    now: () => new Date(),
  };
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
