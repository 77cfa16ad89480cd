/**
 * `baton/client`: the typed TypeScript client of Baton's HTTP API. See
 * docs/client.md.
 *
 * @module
 */
export { BatonClient, type BatonClientOptions } from './client.js';
export type { PatchOptions, FinalizeOptions } from './checkpoints.js';
export { BatonError, UNEXPECTED_RESPONSE, type FieldError, type Problem } from './errors.js';
export type { BackoffPolicy } from './retry.js';
export type { StreamOptions } from './sse.js';
export type { CallOptions, Fetch } from './transport.js';
export type * from './types.js';
