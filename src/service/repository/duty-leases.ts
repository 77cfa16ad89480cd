/**
 * Who does each background duty, under the system space `duty (name)`: the
 * instance that holds it and until when, on the holder's clock
 * (`fleet/duties.ts`).
 *
 * @module
 */
import { MESSAGE_PACK, systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';

export interface DutyLease {
  duty: string;
  holder: string;
  expiresAt: string;
}

const space = systemKeyspace().duties;

export async function readDutyLease(tx: Transaction, duty: string): Promise<DutyLease | undefined> {
  const key = space.pack(duty);
  const value = await tx.get(key);
  return value === undefined ? undefined : (MESSAGE_PACK.decode(Buffer.from(value), key) as DutyLease);
}

export function writeDutyLease(tx: Transaction, lease: DutyLease): void {
  const key = space.pack(lease.duty);
  tx.set(key, MESSAGE_PACK.encode(lease, key));
}

export function clearDutyLease(tx: Transaction, duty: string): void {
  tx.clear(space.pack(duty));
}
