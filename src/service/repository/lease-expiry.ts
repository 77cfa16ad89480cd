/**
 * Leases by expiry time, across tenants, so one sweep finds every lease that
 * ran out without scanning tasks. An entry is added when a lease is granted
 * or renewed and removed when it is renewed, released, superseded or
 * expired. Entries are spread over buckets by a hash of the lease id
 * (`expiry-buckets.ts`); those written before buckets are still found and
 * removed.
 *
 * @module
 */
import { systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';
import { bucketOf, dueEntries } from './expiry-buckets.js';

const EMPTY = Buffer.alloc(0);
const spaces = systemKeyspace();

/** A lease whose expiry time has come. */
export interface DueLease {
  expiresAt: string;
  tenant: string;
  taskId: string;
  leaseId: string;
}

/** One tenant's entries, inside a task transaction. */
export class LeaseExpiryRows {
  constructor(
    private readonly tx: Transaction,
    private readonly tenant: string,
  ) {}

  add(lease: { expiresAt: string; taskId: string; id: string }): void {
    this.tx.set(spaces.leaseExpiry.pack(bucketOf(lease.id), lease.expiresAt, this.tenant, lease.taskId, lease.id), EMPTY);
  }

  remove(lease: { expiresAt: string; taskId: string; id: string }): void {
    this.tx.clear(spaces.leaseExpiry.pack(bucketOf(lease.id), lease.expiresAt, this.tenant, lease.taskId, lease.id));
    // A lease granted before entries were bucketed has its entry in the earlier layout.
    this.tx.clear(spaces.leaseExpiry.pack(lease.expiresAt, this.tenant, lease.taskId, lease.id));
  }
}

/** Up to `limit` leases of any tenant whose expiry is at or before `now`, oldest first. */
export async function dueLeases(tx: Transaction, now: string, limit: number): Promise<DueLease[]> {
  const entries = await dueEntries(tx, spaces.leaseExpiry, now, limit);
  return entries.map(({ parts }) => {
    const [expiresAt, tenant, taskId, leaseId] = parts as [string, string, string, string];
    return { expiresAt, tenant, taskId, leaseId };
  });
}
