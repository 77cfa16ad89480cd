/**
 * Ed25519 signatures at finalization (21 CFR Part 11): the signer, the time
 * and the meaning, over the checkpoint hash. The key comes from
 * BATON_SIGNING_KEY_FILE (PKCS#8 PEM); `GET /v1/keys` publishes its public half.
 *
 * @module
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign as edSign, verify as edVerify, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../config.js';
import type { SignatureRecord } from '../domain/checkpoint.js';
import { canonicalJson, sha256Hex } from '../domain/hash.js';

export interface PublicKeyInfo {
  keyId: string;
  algorithm: 'Ed25519';
  publicKeyPem: string;
}

export interface Signer {
  publicKey: PublicKeyInfo;
  sign(hash: string, signer: string, meaning: string): SignatureRecord;
  /** The raw 64-byte Ed25519 signature of `data` (an evidence bundle's manifest). */
  signBytes(data: Buffer): Buffer;
}

/** What is signed: the canonical JSON of the hash, signer, meaning and time. */
export function signedPayload(record: Omit<SignatureRecord, 'value' | 'algorithm' | 'keyId'>, hash: string): Buffer {
  return Buffer.from(canonicalJson({ hash, signer: record.signer, meaning: record.meaning, signedAt: record.signedAt }));
}

export function loadSigner(keyFile: string, now: () => Date = () => new Date()): Signer {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(keyFile));
  } catch {
    throw new ConfigError(`BATON_SIGNING_KEY_FILE (${keyFile}) cannot be read as a private key; point it at an Ed25519 private key in PKCS#8 PEM.`);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new ConfigError('BATON_SIGNING_KEY_FILE must hold an Ed25519 private key (PKCS#8 PEM).');
  const publicKey = createPublicKey(privateKey);
  const der = publicKey.export({ format: 'der', type: 'spki' });
  const info: PublicKeyInfo = {
    keyId: sha256Hex(der).slice(0, 16),
    algorithm: 'Ed25519',
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
  return {
    publicKey: info,
    sign(hash, signer, meaning) {
      const base = { signer, meaning, signedAt: now().toISOString() };
      const value = edSign(null, signedPayload(base, hash), privateKey).toString('base64');
      return { algorithm: 'Ed25519', keyId: info.keyId, ...base, value };
    },
    signBytes: (data) => edSign(null, data, privateKey),
  };
}

export function verifySignature(publicKey: KeyObject, record: SignatureRecord, hash: string): boolean {
  return edVerify(null, signedPayload(record, hash), publicKey, Buffer.from(record.value, 'base64'));
}

/**
 * The signer of an embedded deployment without BATON_SIGNING_KEY_FILE: a key
 * made once and kept beside the data (mode 0600), so signatures work from the
 * first start and stay verifiable across restarts.
 */
export function loadOrCreateSigner(keyFile: string, now?: () => Date): Signer {
  if (!existsSync(keyFile)) {
    mkdirSync(dirname(keyFile), { recursive: true });
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' });
  }
  return loadSigner(keyFile, now);
}

