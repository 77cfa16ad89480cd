/**
 * Operation records: each logical write's id and result, written in the same
 * transaction as its effect, so a repeat (a client retry, a store re-running
 * a body whose commit outcome was unknown, a queued write replayed) reads the
 * first result instead of applying twice. Client Idempotency-Keys (`key:`
 * ids) and ids the service mints (`op:` ids) live in separate spaces.
 *
 * @module
 */
import { applyOnce, type OnceResult } from '../../store/once.js';
import type { Transaction } from '../../store/store.js';
import type { Keyspace } from './keyspace.js';

export { OperationReusedError } from '../../store/once.js';

export class OperationRows {
  constructor(
    private readonly tx: Transaction,
    private readonly ks: Keyspace,
  ) {}

  /** Runs `body` unless `operationId` is recorded; a recorded id with another fingerprint throws. */
  once<T>(operationId: string, fingerprint: string, body: () => Promise<T>): Promise<OnceResult<T>> {
    const space = operationId.startsWith('key:') ? this.ks.idempotency : this.ks.operations;
    return applyOnce(this.tx, space, operationId, body, fingerprint);
  }
}
