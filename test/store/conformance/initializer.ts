import type { StoreConfig } from '../../../src/store/open.js';
import type { Store, StoreHooks } from '../../../src/store/store.js';

/**
 * How a store joins the conformance suite. Every test gets a fresh, empty
 * store from `create` (its own data directory or key prefix) and hands it to
 * `destroy`, which closes it and removes what it wrote.
 */
export interface StoreInitializer {
  name: string;
  /** When set, the whole suite is reported as skipped with this reason. */
  skipReason?: string;
  beforeAll?(): Promise<void>;
  afterAll?(): Promise<void>;
  /** `hooks` are passed to the store when it is opened (and opened again by `reopen`). */
  create(options?: { hooks?: StoreHooks }): Promise<StoreHandle>;
}

export interface StoreHandle {
  store: Store;
  /** The settings that open this same store again, from another process too. */
  config: StoreConfig;
  /** Opens the same store again after `store` was closed (or its process killed). */
  reopen(): Promise<Store>;
  /** Closes whatever is open and removes every key or file the test wrote. */
  destroy(): Promise<void>;
}
