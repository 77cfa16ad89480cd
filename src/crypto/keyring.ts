/**
 * Encryption at rest: the keys of `BATON_ENCRYPTION_KEY_FILE`, AES-256-GCM
 * sealing of stored bytes, and keyed HMACs for blind index keys. A sealed
 * value is
 * `0xC1 ‖ idLength (1 byte) ‖ keyId ‖ nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes)`;
 * 0xC1 is the one byte MessagePack never uses, and JSON text never starts
 * with it, so a sealed value is told from a plain one (written before
 * encryption was turned on) by its first byte. The associated data is the
 * value's identity (its key in the store), so a sealed value copied under
 * another key does not open. Nothing here knows the store or the service:
 * the repository and the write queue both seal through it
 * (`docs/encryption.md`).
 *
 * @module
 */
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomFillSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The first byte of every sealed value. */
export const SEALED_MARK = 0xc1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** 32 bytes in base64: 43 characters and one `=` of padding (optional). */
const BASE64_32 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=?$/;

export interface KeyEntry {
  id: string;
  key: Buffer;
  /** The tenant whose values this key seals; absent: every tenant without a key of its own. */
  tenant?: string;
}

/** The key file cannot be used as it is; the message says which line and why. */
export class KeyFileError extends Error {
  override name = 'KeyFileError';
}

/** A sealed value names a key this process does not have. */
export class MissingKeyError extends Error {
  override name = 'MissingKeyError';
  constructor(readonly keyId: string) {
    super(`A stored value is sealed with encryption key "${keyId}", which is not in the key file.`);
  }
}

/** A sealed value did not open: altered, or moved to another key. */
export class SealBrokenError extends Error {
  override name = 'SealBrokenError';
}

/** The lines `KEY_ID:BASE64_OF_32_BYTES[:TENANT]` of a key file; blank lines and `#` comments are skipped. */
export function parseKeyFile(text: string, source: string): KeyEntry[] {
  const entries: KeyEntry[] = [];
  const seen = new Map<string, Buffer>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `${source} line ${index + 1}`;
    const [id, encoded, tenant, extra] = line.split(':');
    if (extra !== undefined || id === undefined || encoded === undefined) throw new KeyFileError(`${where} is not KEY_ID:BASE64_OF_32_BYTES[:TENANT].`);
    if (!NAME.test(id)) throw new KeyFileError(`${where}: the key id keeps to letters, digits, ".", "_" and "-" (at most 64).`);
    if (tenant !== undefined && !NAME.test(tenant)) throw new KeyFileError(`${where}: the tenant keeps to letters, digits, ".", "_" and "-" (at most 64).`);
    const key = Buffer.from(encoded, 'base64');
    if (!BASE64_32.test(encoded) || key.length !== KEY_BYTES) {
      throw new KeyFileError(`${where}: the key of "${id}" must be 32 bytes in base64 (openssl rand -base64 32).`);
    }
    const earlier = seen.get(id);
    if (earlier !== undefined && !earlier.equals(key)) throw new KeyFileError(`${where}: key id "${id}" appears twice with different keys.`);
    seen.set(id, key);
    entries.push({ id, key, ...(tenant !== undefined ? { tenant } : {}) });
  });
  if (entries.length === 0) throw new KeyFileError(`${source} holds no key; add a line KEY_ID:BASE64_OF_32_BYTES (openssl rand -base64 32).`);
  return entries;
}

/** Nonces come from one pool filled from the system's random source: one call per 4,096 values. */
const noncePool = Buffer.alloc(NONCE_BYTES * 4096);
let nonceAt = noncePool.length;

function nextNonce(): Buffer {
  if (nonceAt === noncePool.length) {
    randomFillSync(noncePool);
    nonceAt = 0;
  }
  const nonce = noncePool.subarray(nonceAt, nonceAt + NONCE_BYTES);
  nonceAt += NONCE_BYTES;
  return nonce;
}

/** The key id a sealed value names, or undefined for a plain one. */
export function sealedKeyId(bytes: Uint8Array): string | undefined {
  // An empty key id is no key: `0xC1 0x00` marks a compressed plain value (`service/repository/compression.ts`).
  if (bytes.length < 2 || bytes[0] !== SEALED_MARK || bytes[1] === 0) return undefined;
  return Buffer.from(bytes.buffer, bytes.byteOffset + 2, bytes[1]).toString('utf8');
}

export class Keyring {
  private readonly byId = new Map<string, KeyEntry>();
  /** Each key made a KeyObject once: a raw key is imported again by every cipher made from it. */
  private readonly objects = new Map<string, KeyObject>();
  private readonly sealers = new Map<string, KeyEntry | undefined>();

  constructor(readonly entries: readonly KeyEntry[]) {
    for (const entry of entries) {
      this.byId.set(entry.id, entry);
      this.objects.set(entry.id, createSecretKey(entry.key));
    }
  }

  /** The key file at `path`; throws {@link KeyFileError} with a sentence naming the problem. */
  static fromFile(path: string): Keyring {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      throw new KeyFileError(`BATON_ENCRYPTION_KEY_FILE (${path}) cannot be read.`);
    }
    return new Keyring(parseKeyFile(text, path));
  }

  /** Every key id of the file. */
  get ids(): string[] {
    return [...this.byId.keys()];
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** The key that seals `tenant`'s new values: its last line, else the last line without a tenant. */
  sealingKey(tenant: string): KeyEntry | undefined {
    if (!this.sealers.has(tenant)) {
      const own = this.entries.filter((entry) => entry.tenant === tenant);
      const shared = this.entries.filter((entry) => entry.tenant === undefined);
      this.sealers.set(tenant, own[own.length - 1] ?? shared[shared.length - 1]);
    }
    return this.sealers.get(tenant);
  }

  /** The keys that seal some tenant's new values: the last shared line and each tenant's last line. */
  sealingKeys(): KeyEntry[] {
    const last = new Map<string, KeyEntry>();
    for (const entry of this.entries) last.set(entry.tenant ?? '', entry);
    return [...new Map([...last.values()].map((entry) => [entry.id, entry])).values()];
  }

  /** `plain` sealed with `entry`, bound to `aad`. */
  seal(entry: KeyEntry, plain: Uint8Array, aad: Uint8Array): Buffer {
    const id = Buffer.from(entry.id, 'utf8');
    const nonce = nextNonce();
    const cipher = createCipheriv('aes-256-gcm', this.objects.get(entry.id) ?? entry.key, nonce);
    cipher.setAAD(aad);
    const head = Buffer.allocUnsafe(2 + id.length + NONCE_BYTES);
    head[0] = SEALED_MARK;
    head[1] = id.length;
    id.copy(head, 2);
    nonce.copy(head, 2 + id.length);
    return Buffer.concat([head, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  }

  /** The plain bytes of `bytes`: a plain value as it is, a sealed one opened. */
  open(bytes: Uint8Array, aad: Uint8Array): Buffer {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const keyId = sealedKeyId(buffer);
    if (keyId === undefined) return buffer;
    const entry = this.byId.get(keyId);
    if (entry === undefined) throw new MissingKeyError(keyId);
    const at = 2 + buffer[1]!;
    if (buffer.length < at + NONCE_BYTES + TAG_BYTES) throw new SealBrokenError('The sealed value is cut short.');
    const decipher = createDecipheriv('aes-256-gcm', this.objects.get(keyId)!, buffer.subarray(at, at + NONCE_BYTES));
    decipher.setAAD(aad);
    decipher.setAuthTag(buffer.subarray(buffer.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(buffer.subarray(at + NONCE_BYTES, buffer.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SealBrokenError('The sealed value does not open: it was altered or moved to another key.');
    }
  }
}

/** Opens without keys: a plain value as it is; a sealed one names the key that is missing. */
export function openPlain(bytes: Uint8Array): Buffer {
  const keyId = sealedKeyId(bytes);
  if (keyId !== undefined) throw new MissingKeyError(keyId);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Keyed HMACs of index values (blind indexes): the same word always gives the
 * same key part, and nothing of the word can be read back from it. Words
 * repeat across checkpoints, so the last 65,536 are remembered.
 */
export class Blinder {
  private cache = new Map<string, string>();
  private readonly key: KeyObject;

  constructor(key: Buffer) {
    this.key = createSecretKey(key);
  }

  blind(value: string): string {
    let blinded = this.cache.get(value);
    if (blinded === undefined) {
      // 12 bytes of HMAC-SHA-256 (16 characters): a collision needs about 2^48 distinct words in one tenant, and keys stay short.
      blinded = `~${createHmac('sha256', this.key).update(value, 'utf8').digest().toString('base64url', 0, 12)}`;
      if (this.cache.size >= 65_536) this.cache = new Map();
      this.cache.set(value, blinded);
    }
    return blinded;
  }
}
