/**
 * The public keys that signed anything in the store, under the system space
 * `sig (keyId)`: noted by each instance with a signing key when it starts
 * (its evidence bundles are signed with it) and by every finalization it
 * signs, in that transaction. `GET /v1/keys` lists them all, whichever
 * instance answers (DESIGN §10). Public keys are no tenant's data: plain.
 *
 * @module
 */
import { MESSAGE_PACK, systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';

export interface SigningKeyEntry {
  keyId: string;
  algorithm: 'Ed25519';
  publicKeyPem: string;
}

const space = systemKeyspace().signingKeys;

export function noteSigningKey(tx: Transaction, entry: SigningKeyEntry): void {
  const key = space.pack(entry.keyId);
  tx.set(key, MESSAGE_PACK.encode({ keyId: entry.keyId, algorithm: entry.algorithm, publicKeyPem: entry.publicKeyPem }, key));
}

/** Every key noted, by id; a handful, read whole. */
export async function signingKeys(tx: Transaction): Promise<SigningKeyEntry[]> {
  const { begin, end } = space.range();
  const rows = await tx.getRange(begin, end);
  return rows.map((row) => MESSAGE_PACK.decode(Buffer.from(row.value), row.key) as SigningKeyEntry);
}
