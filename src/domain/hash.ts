/**
 * The checkpoint hash: SHA-256 (hex) of the RFC 8785 canonical JSON of the
 * checkpoint without `compliance.hash` and `compliance.signature`.
 * `docs/hashing.md` shows how to recompute it elsewhere.
 *
 * @module
 */
import { hash } from 'node:crypto';
import { canonicalize } from './canonical-json.js';
import type { Checkpoint } from './checkpoint.js';

/** The hashed form: the checkpoint without its hash and signature. */
export function hashedContent(checkpoint: Checkpoint): Omit<Checkpoint, 'compliance'> & { compliance: Omit<Checkpoint['compliance'], 'hash' | 'signature'> } {
  const { hash: _hash, signature: _signature, ...compliance } = checkpoint.compliance;
  return { ...checkpoint, compliance };
}

/** RFC 8785 canonical JSON of any JSON value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('The value has no JSON form.');
  return text;
}

/** SHA-256, hex; one-shot `crypto.hash`, which skips the Hash object a create/update/digest chain makes (~1 µs a call). */
export function sha256Hex(data: string | Buffer): string {
  return hash('sha256', data, 'hex');
}

/** The canonical bytes that are hashed, and their hash. */
export function hashCheckpoint(checkpoint: Checkpoint): { canonical: string; hash: string } {
  const canonical = canonicalJson(hashedContent(checkpoint));
  return { canonical, hash: sha256Hex(canonical) };
}
