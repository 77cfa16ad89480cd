/**
 * How a checkpoint is stored. The value keeps the exact canonical JSON that
 * was hashed, so verifying a read is one SHA-256 over the stored bytes, and a
 * flipped byte anywhere in the content is caught.
 *
 * @module
 */
import type { Checkpoint, SignatureRecord } from '../domain/checkpoint.js';
import { hashCheckpoint, sha256Hex } from '../domain/hash.js';

export interface StoredCheckpoint {
  /** Canonical JSON of the checkpoint without hash and signature. */
  c: string;
  /** Its SHA-256, hex. */
  h: string;
  s?: SignatureRecord;
}

export function toStored(checkpoint: Checkpoint): { stored: StoredCheckpoint; hash: string; bytes: number } {
  const { canonical, hash } = hashCheckpoint(checkpoint);
  const stored: StoredCheckpoint = { c: canonical, h: hash };
  if (checkpoint.compliance.signature) stored.s = checkpoint.compliance.signature;
  return { stored, hash, bytes: Buffer.byteLength(canonical) };
}

export type Verified = { ok: true; checkpoint: Checkpoint } | { ok: false; reason: string };

/** Checks a stored record against its hash and returns the checkpoint it holds. */
export function verifyStored(record: unknown): Verified {
  if (typeof record !== 'object' || record === null) return { ok: false, reason: 'unreadable record' };
  const { c, h, s } = record as Partial<StoredCheckpoint>;
  if (typeof c !== 'string' || typeof h !== 'string') return { ok: false, reason: 'unreadable record' };
  if (sha256Hex(c) !== h) return { ok: false, reason: 'hash mismatch' };
  let checkpoint: Checkpoint;
  try {
    checkpoint = JSON.parse(c) as Checkpoint;
  } catch {
    return { ok: false, reason: 'unreadable content' };
  }
  checkpoint.compliance = { ...checkpoint.compliance, hash: h };
  if (s) checkpoint.compliance.signature = s;
  return { ok: true, checkpoint };
}
