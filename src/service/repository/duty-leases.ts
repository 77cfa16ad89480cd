/**
 * The maintenance duties' leases, under the system space `duty (name)`: which
 * instance does a duty of the fleet (the lease sweep, the operation sweep,
 * the maintenance runner) and until when, by its own clock. One holder at a
 * time; another instance takes a lease over once it has run out
 * (`fleet/duties.ts`).
 *
 * @module
 */
import { MESSAGE_PACK, systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';

export interface DutyLease {
  duty: string;
  /** The instance that holds it. */
  holder: string;
  /** Until when, in ms since the epoch by the holder's clock; renewed while it runs the duty. */
  until: number;
  /** When the holder took it (ISO 8601). */
  since: string;
}

const space = systemKeyspace().duties;

export async function getDutyLease(tx: Transaction, duty: string): Promise<DutyLease | undefined> {
  const key = space.pack(duty);
  const value = await tx.get(key);
  return value === undefined ? undefined : (MESSAGE_PACK.decode(Buffer.from(value), key) as DutyLease);
}

export function putDutyLease(tx: Transaction, lease: DutyLease): void {
  const key = space.pack(lease.duty);
  tx.set(key, MESSAGE_PACK.encode(lease, key));
}

export function clearDutyLease(tx: Transaction, duty: string): void {
  tx.clear(space.pack(duty));
}
