/**
 * A service context for running the service inside one process without
 * HTTP: benchmarks that load a store through the service layer, and tests
 * that call service functions. Silent log, fresh metrics, no signer, the
 * service's own defaults for the rest; `overrides` replaces any part.
 *
 * @module
 */
import { createMetrics } from '../metrics.js';
import type { Store } from '../store/store.js';
import type { ServiceContext } from './context.js';
import { EventNotifier } from './events.js';
import { integrityRecorder } from './integrity.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function standaloneContext(store: Store, overrides: Partial<ServiceContext> = {}): ServiceContext {
  return {
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
    ...overrides,
  };
}
