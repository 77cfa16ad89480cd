/**
 * The signing keys of the fleet: every public key that signed anything in
 * the store (`repository/signing-keys.ts`), listed alike by every instance.
 *
 * @module
 */
import type { ServiceContext } from '../context.js';
import { signingKeys } from '../repository/repository.js';
import type { PublicKeyInfo } from '../signing.js';
import { runTransaction } from '../transactions.js';

/**
 * Every public key that signed anything in the store, whichever instance
 * signed (DESIGN §10), with this instance's own: one listing on every
 * instance. A store not reachable lists this instance's key alone.
 */
export async function publicKeys(ctx: ServiceContext): Promise<PublicKeyInfo[]> {
  const stored = await runTransaction(ctx, (tx) => signingKeys(tx), { readOnly: true });
  const byId = new Map<string, PublicKeyInfo>(stored.map((entry) => [entry.keyId, entry]));
  if (ctx.signer !== undefined) byId.set(ctx.signer.publicKey.keyId, ctx.signer.publicKey);
  return [...byId.values()].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0));
}
