/**
 * Checkpoint records are read without the general MessagePack decoder
 * (`decodeRecord` in `codec.ts`); what it reads is what the general decoder
 * reads, and what it does not recognize it leaves to it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodePlain, decodeRecord } from '../../../src/service/repository/codec.js';
import { compress } from '../../../src/service/repository/compression.js';
import { decodeValue, encodeValue } from '../../../src/store/keyspace.js';

describe('decodeRecord', () => {
  it('reads every { c, h } record as the general decoder does, at every string length', () => {
    const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 400 }), fc.string({ minLength: 200, maxLength: 3000 }));
    fc.assert(
      fc.property(text, fc.string({ maxLength: 70 }), (c, h) => {
        const bytes = Buffer.from(encodeValue({ c, h }));
        expect(decodeRecord(bytes)).toEqual(decodeValue(bytes));
        expect(decodePlain(compress(bytes))).toEqual({ c, h });
      }),
      { numRuns: 500 },
    );
    const long = 'é'.repeat(40_000);
    expect(decodeRecord(Buffer.from(encodeValue({ c: long, h: 'x' })))).toEqual({ c: long, h: 'x' });
  });

  it('leaves anything else to the general decoder: signed records, other shapes, cut or padded values', () => {
    const signed = Buffer.from(encodeValue({ c: '{}', h: 'ab', s: { alg: 'ed25519' } }));
    expect(decodeRecord(signed)).toBeUndefined();
    expect(decodePlain(signed)).toEqual({ c: '{}', h: 'ab', s: { alg: 'ed25519' } });
    const record = Buffer.from(encodeValue({ c: 'text'.repeat(100), h: 'f'.repeat(64) }));
    for (let cut = 0; cut < record.length; cut += 37) expect(decodeRecord(record.subarray(0, cut))).toBeUndefined();
    expect(decodeRecord(Buffer.concat([record, Buffer.from([0xc0])]))).toBeUndefined();
    expect(decodeRecord(Buffer.from(encodeValue({ h: 'a', c: 'b' })))).toBeUndefined();
    expect(decodeRecord(Buffer.from(encodeValue({ c: 1, h: 'a' })))).toBeUndefined();
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const bytes = Buffer.from(encodeValue(value));
        let expected: unknown;
        try {
          expected = decodeValue(bytes);
        } catch {
          // What the general decoder refuses (a `__proto__` key), reading a record refuses too.
          expect(decodeRecord(bytes)).toBeUndefined();
          expect(() => decodePlain(bytes)).toThrow();
          return;
        }
        const read = decodeRecord(bytes);
        if (read !== undefined) expect(read).toEqual(expected);
        expect(decodePlain(bytes)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
