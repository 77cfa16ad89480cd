/**
 * How a checkpoint is stored. The value keeps the exact canonical JSON that
 * was hashed, so verifying a read is one SHA-256 over the stored bytes, and a
 * flipped byte anywhere in the content is caught.
 *
 * @module
 */
import type { Checkpoint, SignatureRecord } from '../../domain/checkpoint.js';
import { hashCheckpoint, sha256Hex } from '../../domain/hash.js';

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

/**
 * A verified stored checkpoint. Its JSON answer is made from the stored
 * canonical text without parsing it (lists of a hundred checkpoints are
 * answered by concatenation); the object is parsed only when asked for.
 */
export class CheckpointDoc {
  private readonly raw: StoredCheckpoint;
  private parsed: Checkpoint | undefined;

  constructor(raw: StoredCheckpoint) {
    this.raw = raw;
  }

  get checkpoint(): Checkpoint {
    if (this.parsed === undefined) {
      const checkpoint = JSON.parse(this.raw.c) as Checkpoint;
      checkpoint.compliance = { ...checkpoint.compliance, hash: this.raw.h };
      if (this.raw.s) checkpoint.compliance.signature = this.raw.s;
      this.parsed = checkpoint;
    }
    return this.parsed;
  }

  /** The canonical text the hash covers (RFC 8785, without hash and signature): `sha256sum` of it is the hash. */
  get canonical(): string {
    return this.raw.c;
  }

  /** Anything that serializes a doc the ordinary way still gets the checkpoint. */
  toJSON(): Checkpoint {
    return this.checkpoint;
  }

  /** `version` sorts last among the top-level keys, so canonical JSON ends with it. */
  get version(): number {
    const { c } = this.raw;
    // A search from the end: a regular expression anchored at the end still scans the whole text.
    const at = c.lastIndexOf('"version":');
    const digits = at < 0 ? '' : c.slice(at + '"version":'.length, -1);
    return /^\d+$/.test(digits) ? Number(digits) : this.checkpoint.version;
  }

  /**
   * The checkpoint as JSON: the canonical text with the hash (and signature)
   * put into its `compliance` object. The first `"compliance":{` is the
   * top-level one: only `agentId`, `agentType` and `codeVersion`, all strings, sort before
   * it, and a quote inside a JSON string is always escaped.
   */
  get json(): string {
    const { c, h, s } = this.raw;
    const marker = '"compliance":{';
    const at = c.indexOf(marker);
    if (at < 0) return JSON.stringify(this.checkpoint);
    const open = at + marker.length;
    const sealed = `"hash":${JSON.stringify(h)}${s ? `,"signature":${JSON.stringify(s)}` : ''}`;
    return `${c.slice(0, open)}${sealed}${c[open] === '}' ? '' : ','}${c.slice(open)}`;
  }
}

export type Verified = { ok: true; doc: CheckpointDoc } | { ok: false; reason: string };

/**
 * Frozen records whose text matched their hash. The decoded-record cache
 * (`codec.ts`) hands a read the same frozen record only when the stored
 * bytes equal the ones it was decoded from, and a frozen record's text and
 * hash cannot change: hashing it again would hash the same text. Any other
 * record (stored bytes that changed, a tenant sealed at rest, a record
 * decoded elsewhere) is hashed on every read. SHA-256 of a 2 KB text is
 * ~7.6 µs here (no SHA extensions), a GET's largest piece of route work.
 */
const VERIFIED = new WeakSet<object>();

/** Checks a stored record against its hash. */
export function verifyStored(record: unknown): Verified {
  if (typeof record !== 'object' || record === null) return { ok: false, reason: 'unreadable record' };
  const { c, h } = record as Partial<StoredCheckpoint>;
  if (typeof c !== 'string' || typeof h !== 'string') return { ok: false, reason: 'unreadable record' };
  if (!VERIFIED.has(record)) {
    if (sha256Hex(c) !== h) return { ok: false, reason: 'hash mismatch' };
    if (Object.isFrozen(record)) VERIFIED.add(record);
  }
  return { ok: true, doc: new CheckpointDoc(record as StoredCheckpoint) };
}
