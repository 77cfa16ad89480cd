/**
 * Applying a logical write exactly once. A store may run a transaction body
 * again after a commit whose outcome it could not learn (FoundationDB's 1021
 * `commit_unknown_result`), a client may retry a request, and a write queued
 * while the store was down is replayed. Recording the operation's id and
 * result in the same transaction as its effect turns each repeat into a read
 * of the first result.
 *
 * @module
 */
import { MESSAGE_PACK, type Subspace, type ValueCodec } from './keyspace.js';
import type { Transaction } from './store.js';

export interface OnceResult<T> {
  result: T;
  /** False when the operation had already been applied and `result` is the recorded one. */
  applied: boolean;
}

/** The operation id was recorded for a different request (its fingerprint differs). */
export class OperationReusedError extends Error {
  override name = 'OperationReusedError';
}

/** A record as stored; `t` (epoch ms) is absent from records written before it was added. */
interface Recorded<T> {
  f: string;
  r: T;
  t?: number;
}

/**
 * Runs `body` inside `tx` unless `operationId` is already recorded under
 * `operations`, and records `body`'s result with the id and `recordedAt`
 * (epoch ms, for expiry). `fingerprint` names the request; a recorded id with
 * another fingerprint throws {@link OperationReusedError}. The result must be
 * plain data. `unrecorded`: the caller knows the id cannot be recorded yet
 * (minted for this write, and this is the first run of its body), so it is
 * not looked up: a read fewer, over FoundationDB a round trip fewer. It is
 * still recorded, for a later run of the body.
 */
export async function applyOnce<T>(
  tx: Transaction,
  operations: Subspace,
  operationId: string,
  body: () => Promise<T>,
  fingerprint = '',
  recordedAt?: number,
  codec: ValueCodec = MESSAGE_PACK,
  unrecorded = false,
): Promise<OnceResult<T>> {
  const key = operations.pack(operationId);
  const recorded = unrecorded ? undefined : await tx.get(key);
  if (recorded !== undefined) {
    const { f, r } = codec.decode(recorded, key) as Recorded<T>;
    if (f !== fingerprint) throw new OperationReusedError('The operation id was already used for another request.');
    return { result: r, applied: false };
  }
  const result = await body();
  tx.set(key, codec.encode({ f: fingerprint, r: result, ...(recordedAt !== undefined ? { t: recordedAt } : {}) } satisfies Recorded<T>, key));
  return { result, applied: true };
}
