/**
 * Applying a logical write exactly once. A store may run a transaction body
 * again after a commit whose outcome it could not learn (FoundationDB's 1021
 * `commit_unknown_result`), and a write queued while the store was down is
 * replayed. Either way the same operation reaches the store twice; recording
 * its id in the same transaction as its effect turns the second time into a
 * read of the first result.
 *
 * @module
 */
import { decodeValue, encodeValue, type Subspace } from './keyspace.js';
import type { Transaction } from './store.js';

export interface OnceResult<T> {
  result: T;
  /** False when the operation had already been applied and `result` is the recorded one. */
  applied: boolean;
}

/**
 * Runs `body` inside `tx` unless `operationId` is already recorded under
 * `operations`; records `body`'s result with the id. The result must be
 * MessagePack-encodable (plain data).
 */
export async function applyOnce<T>(
  tx: Transaction,
  operations: Subspace,
  operationId: string,
  body: () => Promise<T>,
): Promise<OnceResult<T>> {
  const key = operations.pack(operationId);
  const recorded = await tx.get(key);
  if (recorded !== undefined) return { result: decodeValue<{ r: T }>(recorded).r, applied: false };
  const result = await body();
  tx.set(key, encodeValue({ r: result }));
  return { result, applied: true };
}
