/**
 * Operation records by age, across tenants, so a sweeper can delete the ones
 * older than the retention window without knowing the tenants. Entries live
 * in the system space `opx`, spread over {@link BUCKETS} buckets by a hash of
 * the operation id (`expiry-buckets.ts`): every write records an operation
 * on FoundationDB, and time-ordered keys in one range would all land on the
 * last shard.
 *
 * @module
 */
import { keyspaceOf } from './keyspace.js';
import { systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';
import { BUCKETS, bucketOf } from './expiry-buckets.js';

const EMPTY = Buffer.alloc(0);
const expiry = systemKeyspace().operationExpiry;

/** Notes an operation recorded at `recordedAt` (epoch ms) by `tenant`. */
export function noteOperation(tx: Transaction, tenant: string, operationId: string, recordedAt: number): void {
  tx.set(expiry.pack(bucketOf(operationId), recordedAt, tenant, operationId), EMPTY);
}

/**
 * Deletes up to `limit` operation records of any tenant recorded before
 * `before` (epoch ms), with their entries here, oldest first within each
 * bucket. Returns how many it deleted: fewer than `limit` means none is left.
 */
export async function expireOperations(tx: Transaction, before: number, limit: number): Promise<number> {
  let deleted = 0;
  for (let bucket = 0; bucket < BUCKETS && deleted < limit; bucket++) {
    const rows = await tx.getRange(expiry.range(bucket).begin, expiry.pack(bucket, before), { limit: limit - deleted });
    for (const row of rows) {
      const [, , tenant, operationId] = expiry.unpack(row.key) as [number, number, string, string];
      const ks = keyspaceOf(tenant);
      // A client's key is recorded as `key:<key>` (service/commands.ts), so the id tells the space it lives in;
      // but earlier releases recorded a purge's batches under a client's key as `key:<key>:<n>` among the operations.
      if (operationId.startsWith('key:')) tx.clear(ks.idempotency.pack(operationId));
      tx.clear(ks.operations.pack(operationId));
      tx.clear(row.key);
    }
    deleted += rows.length;
  }
  return deleted;
}
