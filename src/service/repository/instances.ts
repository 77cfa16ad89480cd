/**
 * The instances over the store, under the system space `ins (instanceId)`:
 * each running instance says which encryption keys it seals with, and each
 * instance whose write queue holds writes says which keys those writes
 * need, so that a re-seal pass on one instance retires no key another one
 * still uses (DESIGN §10). A running instance refreshes its entry
 * (`seenAt`); one that stops with an empty queue removes it, one that stops
 * (or dies) with writes queued leaves it until it has replayed them.
 *
 * @module
 */
import { MESSAGE_PACK, systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';

export interface InstanceEntry {
  id: string;
  /** The keys it seals new values with (one per tenant, and the shared one). */
  sealingKeys: string[];
  /** The keys its queued writes are sealed with; empty when its queue is. */
  journalKeys: string[];
  /** When it last refreshed this entry (its own clock). */
  seenAt: string;
}

const space = systemKeyspace().instances;

export function putInstance(tx: Transaction, entry: InstanceEntry): void {
  const key = space.pack(entry.id);
  tx.set(key, MESSAGE_PACK.encode(entry, key));
}

export function removeInstance(tx: Transaction, id: string): void {
  tx.clear(space.pack(id));
}

/** Every entry; a fleet is a handful of instances, read whole. */
export async function listInstances(tx: Transaction): Promise<InstanceEntry[]> {
  const { begin, end } = space.range();
  const rows = await tx.getRange(begin, end);
  return rows.map((row) => MESSAGE_PACK.decode(Buffer.from(row.value), row.key) as InstanceEntry);
}
