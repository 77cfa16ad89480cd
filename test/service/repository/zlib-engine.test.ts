/**
 * The reused zlib streams (`zlib-engine.ts`) write raw DEFLATE that zlib's
 * one-shot functions read back, read back what those write, and a damaged
 * value leaves the stream fit for the next.
 */
import { randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RawDeflater, RawInflater, ZlibError } from '../../../src/service/repository/zlib-engine.js';

const dictionary = Buffer.from('{"agentId":"","executionState":{"completedItems":[{"description":"","id":"step-"}]},"taskId":""}');
const options = { level: 1, windowBits: 12, dictionary };
const deflater = new RawDeflater(options);
const inflater = new RawInflater({ windowBits: 12, dictionary });

const values = fc.oneof(
  fc.uint8Array({ maxLength: 40_000 }),
  fc.string({ maxLength: 5000 }).map((text) => new TextEncoder().encode(`{"taskId":"${text}","agentId":"${text}"}`.repeat(4))),
);

describe('RawDeflater and RawInflater', () => {
  it('reuse the stream on this Node release (the fallback makes one per call)', () => {
    expect(deflater.reused).toBe(true);
    expect(inflater.reused).toBe(true);
  });

  it('deflate to raw DEFLATE that zlib inflates back, and inflate what zlib deflates, value after value', () => {
    fc.assert(
      fc.property(fc.array(values, { minLength: 1, maxLength: 5 }), (arrays) => {
        for (const array of arrays) {
          const bytes = Buffer.from(array);
          const packed = deflater.deflate(bytes);
          // Not always deflateRawSync's bytes (a reused stream keeps hash chains), but within zlib's compressBound.
          expect(packed.length).toBeLessThanOrEqual(bytes.length + (bytes.length >> 12) + (bytes.length >> 14) + 13);
          expect(inflater.inflate(packed, bytes.length).equals(bytes)).toBe(true);
          expect(inflateRawSync(packed, { windowBits: 12, dictionary }).equals(bytes)).toBe(true);
          expect(inflater.inflate(deflateRawSync(bytes, options), bytes.length).equals(bytes)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('refuse damaged data, a short or long length claim and trailing bytes, and go on working after each', () => {
    const bytes = Buffer.from('the lease table and its migration; '.repeat(100));
    const packed = deflater.deflate(bytes);
    const flipped = Buffer.from(packed);
    for (let i = 2; i < flipped.length; i += 7) flipped[i] = flipped[i]! ^ 0x5a;
    const damaged = [
      () => inflater.inflate(flipped, bytes.length),
      () => inflater.inflate(packed.subarray(0, packed.length >> 1), bytes.length),
      () => inflater.inflate(packed, bytes.length - 1),
      () => inflater.inflate(packed, bytes.length + 1),
      () => inflater.inflate(Buffer.concat([packed, Buffer.from([1, 2, 3])]), bytes.length),
      () => inflater.inflate(randomBytes(300), 5000),
    ];
    for (const attempt of damaged) {
      expect(attempt).toThrow(ZlibError);
      expect(inflater.inflate(packed, bytes.length).equals(bytes)).toBe(true);
      expect(inflater.inflate(deflater.deflate(bytes), bytes.length).equals(bytes)).toBe(true);
    }
  });

  it('inflate without the dictionary it was deflated with fails instead of guessing', () => {
    const bytes = Buffer.from('{"agentId":"a","executionState":{"completedItems":[]},"taskId":"t"}'.repeat(20));
    const plain = new RawInflater({ windowBits: 12 });
    expect(() => plain.inflate(deflater.deflate(bytes), bytes.length)).toThrow(ZlibError);
    expect(plain.inflate(deflateRawSync(bytes, { level: 1, windowBits: 12 }), bytes.length).equals(bytes)).toBe(true);
  });
});
