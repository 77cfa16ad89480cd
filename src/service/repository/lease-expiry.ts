/**
 * Leases by expiry time, across tenants, so one sweep finds every lease that
 * ran out without scanning tasks. An entry is added when a lease is granted
 * or renewed and removed when it is renewed, released, superseded or
 * expired.
 *
 * @module
 */
import { systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';

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
    this.tx.set(spaces.leaseExpiry.pack(lease.expiresAt, this.tenant, lease.taskId, lease.id), EMPTY);
  }

  remove(lease: { expiresAt: string; taskId: string; id: string }): void {
    this.tx.clear(spaces.leaseExpiry.pack(lease.expiresAt, this.tenant, lease.taskId, lease.id));
  }
}

/** Up to `limit` leases of any tenant whose expiry is at or before `now`, oldest first. */
export async function dueLeases(tx: Transaction, now: string, limit: number): Promise<DueLease[]> {
  const begin = spaces.leaseExpiry.range().begin;
  const end = spaces.leaseExpiry.range(now).end;
  const rows = await tx.getRange(begin, end, { limit });
  return rows.map((row) => {
    const [expiresAt, tenant, taskId, leaseId] = spaces.leaseExpiry.unpack(row.key) as [string, string, string, string];
    return { expiresAt, tenant, taskId, leaseId };
  });
}
