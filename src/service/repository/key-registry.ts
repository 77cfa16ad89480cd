/**
 * The encryption keys the store's values may be sealed with, under the
 * system space `keys (keyId)`: noted before a process seals anything with a
 * key, checked against the key file at start-up, forgotten once a re-seal
 * leaves nothing under a key.
 *
 * @module
 */
import { systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';

const space = systemKeyspace().keys;
const EMPTY = Buffer.alloc(0);

export function noteKeys(tx: Transaction, ids: Iterable<string>): void {
  for (const id of ids) tx.set(space.pack(id), EMPTY);
}

/** Every key id noted; a handful, read whole. */
export async function usedKeys(tx: Transaction): Promise<string[]> {
  const { begin, end } = space.range();
  const rows = await tx.getRange(begin, end);
  return rows.map((row) => space.unpack(row.key)[0] as string);
}

export function forgetKey(tx: Transaction, id: string): void {
  tx.clear(space.pack(id));
}
