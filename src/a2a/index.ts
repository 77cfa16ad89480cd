/**
 * `baton/a2a`: the A2A SDK's task store kept in Baton. See docs/a2a.md.
 *
 * @module
 */
export { BatonTaskStore, type BatonTaskStoreOptions } from './task-store.js';
