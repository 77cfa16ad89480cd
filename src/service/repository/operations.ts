/**
 * Operation records: each logical write's id and result, written in the same
 * transaction as its effect, so a repeat (a client retry, a store re-running
 * a body whose commit outcome was unknown, a queued write replayed) reads the
 * first result instead of applying twice. Client Idempotency-Keys (ids
 * `key:<key>`, `service/commands.ts`) and ids the service chooses live in
 * separate spaces, so no client key can collide with them. Each
 * record carries the time it was made and is noted by age
 * (`operation-expiry.ts`), so that records past the retention window are
 * deleted: a repeat after that is a new operation.
 *
 * @module
 */
import { applyOnce, type OnceResult } from '../../store/once.js';
import type { Transaction } from '../../store/store.js';
import type { Codecs } from './codec.js';
import type { Keyspace } from './keyspace.js';
import { noteOperation } from './operation-expiry.js';

export { OperationReusedError } from '../../store/once.js';

export class OperationRows {
  constructor(
    private readonly tx: Transaction,
    private readonly ks: Keyspace,
    private readonly tenant: string,
    private readonly codecs: Codecs,
  ) {}

  /**
   * Runs `body` unless `operationId` is recorded; a recorded id with another
   * fingerprint throws. `client`: a client's Idempotency-Key. `unrecorded`:
   * the id cannot be recorded yet, so it is not looked up (`store/once.ts`).
   */
  async once<T>(operationId: string, client: boolean, fingerprint: string, body: () => Promise<T>, unrecorded = false): Promise<OnceResult<T>> {
    const space = client ? this.ks.idempotency : this.ks.operations;
    // Read from the clock inside the body: it only dates the record for expiry, so a rerun may date it anew.
    const recordedAt = Date.now();
    const outcome = await applyOnce(this.tx, space, operationId, body, fingerprint, recordedAt, client ? this.codecs.idempotency : this.codecs.operations, unrecorded);
    if (outcome.applied) noteOperation(this.tx, this.tenant, operationId, recordedAt);
    return outcome;
  }
}
