/**
 * What the browser checks itself, trusting nothing the service says about
 * it: the checkpoint hash, recomputed as docs/hashing.md describes (SHA-256
 * of the RFC 8785 form without `compliance.hash` and
 * `compliance.signature`), and a finalization signature, verified with the
 * public key the service publishes at `GET /v1/keys` (Ed25519 over the RFC
 * 8785 form of `{ hash, signer, meaning, signedAt }`).
 *
 * @module
 */
import type { Checkpoint } from '../../src/client/types.js';
import { canonicalize } from './canonical.js';
import { sha256Hex, type Digest } from './sha256.js';

export interface PublicKey {
  keyId: string;
  algorithm: string;
  publicKeyPem: string;
}

export type Signature = NonNullable<Checkpoint['compliance']['signature']>;

/** The hash of `checkpoint` as anyone can recompute it. */
export async function recomputeHash(checkpoint: Checkpoint): Promise<Digest> {
  const { hash: _hash, signature: _signature, ...compliance } = checkpoint.compliance;
  return sha256Hex(canonicalize({ ...checkpoint, compliance }));
}

export type SignatureCheck =
  | { result: 'valid' | 'invalid'; key: PublicKey }
  | { result: 'no-key' }
  | { result: 'unsupported'; reason: string };

function base64Bytes(base64: string): Uint8Array<ArrayBuffer> {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

function pemBytes(pem: string): Uint8Array<ArrayBuffer> {
  return base64Bytes(pem.replace(/-----(BEGIN|END) [^-]+-----/g, '').replace(/\s+/g, ''));
}

/** Verifies `signature` over `hash` with the published key of its `keyId`. */
export async function checkSignature(signature: Signature, hash: string, keys: readonly PublicKey[]): Promise<SignatureCheck> {
  const key = keys.find((candidate) => candidate.keyId === signature.keyId);
  if (key === undefined) return { result: 'no-key' };
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) return { result: 'unsupported', reason: 'this page is not a secure context, so the browser offers no Web Crypto' };
  try {
    const publicKey = await subtle.importKey('spki', pemBytes(key.publicKeyPem), { name: 'Ed25519' }, false, ['verify']);
    const message = new TextEncoder().encode(canonicalize({ hash, signer: signature.signer, meaning: signature.meaning, signedAt: signature.signedAt }));
    const value = base64Bytes(signature.value);
    return { result: (await subtle.verify({ name: 'Ed25519' }, publicKey, value, message)) ? 'valid' : 'invalid', key };
  } catch (error) {
    return { result: 'unsupported', reason: `this browser cannot verify Ed25519 (${error instanceof Error ? error.message : String(error)})` };
  }
}
