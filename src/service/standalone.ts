/**
 * A service context for running the service inside one process without
 * HTTP: benchmarks that load a store through the service layer, and tests
 * that call service functions. The configuration's defaults (one place:
 * `config.ts`), a silent log, fresh metrics and no signer; `overrides`
 * replaces any part.
 *
 * @module
 */
import { configSchema } from '../config.js';
import type { Store } from '../store/store.js';
import type { ServiceContext } from './context.js';
import { serviceContext } from './runtime.js';

export function standaloneContext(store: Store, overrides: Partial<ServiceContext> = {}): ServiceContext {
  return { ...serviceContext(configSchema.parse({}), { store, signer: null }), ...overrides };
}
