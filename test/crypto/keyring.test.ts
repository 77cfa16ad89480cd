/**
 * The key file and the sealed-value format: which key seals for a tenant,
 * that a sealed value opens only under its own key and identity, that an
 * altered one does not open, that a missing key is named, and that a key
 * file with a mistake is refused with the line and the reason.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Blinder, Keyring, KeyFileError, MissingKeyError, openPlain, parseKeyFile, SealBrokenError, sealedKeyId } from '../../src/crypto/keyring.js';

const b64 = () => randomBytes(32).toString('base64');
const AAD = Buffer.from('key-a');

describe('parseKeyFile', () => {
  it('reads ids, keys and tenants, skipping blank lines and comments', () => {
    const a = b64();
    const entries = parseKeyFile(`# keys\n\nk1:${a}\nk2:${b64()}:acme\n`, 'keys.txt');
    expect(entries.map((e) => [e.id, e.tenant])).toEqual([
      ['k1', undefined],
      ['k2', 'acme'],
    ]);
    expect(entries[0]!.key).toEqual(Buffer.from(a, 'base64'));
  });

  it.each([
    ['k1', /line 1 is not KEY_ID:BASE64/],
    [`k1:${randomBytes(16).toString('base64')}`, /line 1: the key of "k1" must be 32 bytes/],
    [`k 1:${b64()}`, /line 1: the key id keeps to/],
    [`k1:${b64()}:ac me`, /line 1: the tenant keeps to/],
    [`k1:${b64()}\nk1:${b64()}`, /line 2: key id "k1" appears twice/],
    ['# only a comment', /holds no key/],
  ])('refuses %j with a sentence naming the problem', (text, message) => {
    expect(() => parseKeyFile(text, 'keys.txt')).toThrow(KeyFileError);
    expect(() => parseKeyFile(text, 'keys.txt')).toThrow(message);
  });
});

describe('Keyring', () => {
  const ring = new Keyring(parseKeyFile(`old:${b64()}\nnew:${b64()}\nacme-1:${b64()}:acme\n`, 'keys'));

  it('seals with the last line of the tenant, else the last shared line', () => {
    expect(ring.sealingKey('acme')!.id).toBe('acme-1');
    expect(ring.sealingKey('other')!.id).toBe('new');
    expect(ring.sealingKeys().map((e) => e.id).sort()).toEqual(['acme-1', 'new']);
  });

  it('opens what it sealed, under any of its keys, and names the key in the value', () => {
    const plain = Buffer.from('the words of a checkpoint');
    const sealedOld = ring.seal(ring.entries[0]!, plain, AAD);
    const sealedNew = ring.seal(ring.sealingKey('x')!, plain, AAD);
    expect(sealedKeyId(sealedOld)).toBe('old');
    expect(sealedKeyId(sealedNew)).toBe('new');
    expect(sealedNew.includes(plain)).toBe(false);
    expect(ring.open(sealedOld, AAD)).toEqual(plain);
    expect(ring.open(sealedNew, AAD)).toEqual(plain);
    // A fresh nonce each time: the same value never seals to the same bytes.
    expect(ring.seal(ring.sealingKey('x')!, plain, AAD).equals(sealedNew)).toBe(false);
  });

  it('does not open a value moved to another key, or altered', () => {
    const sealed = ring.seal(ring.sealingKey('x')!, Buffer.from('value'), AAD);
    expect(() => ring.open(sealed, Buffer.from('key-b'))).toThrow(SealBrokenError);
    const altered = Buffer.from(sealed);
    altered[altered.length - 20]! ^= 1;
    expect(() => ring.open(altered, AAD)).toThrow(SealBrokenError);
  });

  it('passes plain values through, and names a key it does not have', () => {
    expect(ring.open(Buffer.from([0x81, 0xa1, 0x61, 0x01]), AAD)).toEqual(Buffer.from([0x81, 0xa1, 0x61, 0x01]));
    const other = new Keyring(parseKeyFile(`gone:${b64()}`, 'keys'));
    const sealed = other.seal(other.sealingKey('t')!, Buffer.from('value'), AAD);
    expect(() => ring.open(sealed, AAD)).toThrow(MissingKeyError);
    expect(() => openPlain(sealed)).toThrow(/encryption key "gone"/);
  });
});

describe('Blinder', () => {
  it('gives the same key part for the same word, different ones for different words or keys, and none of the word', () => {
    const key = randomBytes(32);
    const one = new Blinder(key);
    expect(one.blind('parser')).toBe(new Blinder(key).blind('parser'));
    expect(one.blind('parser')).not.toBe(one.blind('parsers'));
    expect(one.blind('parser')).not.toBe(new Blinder(randomBytes(32)).blind('parser'));
    expect(one.blind('parser')).toMatch(/^~[A-Za-z0-9_-]{16}$/);
  });
});
