/**
 * The cache of decoded checkpoint records (`codec.ts`): a read of bytes
 * already decoded takes the record kept; the bytes it holds stay within its
 * bound; and readers going round a set of records larger than the cache
 * still find most of them kept (a least-recently-used cache finds none).
 */
import { describe, expect, it } from 'vitest';
import { DecodedRecords } from '../../../src/service/repository/codec.js';

const record = (i: number, text = 'x'.repeat(900)) => ({ c: `${text}${i}`, h: `hash-${i}` });
const key = (i: number) => Buffer.from(`key-${i}`);
const bytes = (i: number) => Buffer.alloc(100, i % 251);
/** Each record's size as the cache counts it: stored bytes, text, key. */
const SIZE = 100 + 903 + 8;

describe('DecodedRecords', () => {
  it('answers a read of the same bytes with the record kept, and decodes bytes that changed', () => {
    const cache = new DecodedRecords(1024 * 1024);
    let decodes = 0;
    const first = cache.read(bytes(1), key(1), () => (decodes++, record(1)));
    expect(cache.read(bytes(1), key(1), () => (decodes++, record(1)))).toBe(first);
    expect(decodes).toBe(1);
    const changed = cache.read(bytes(2), key(1), () => (decodes++, record(2)));
    expect(changed).toEqual(record(2));
    expect(decodes).toBe(2);
    expect(Object.isFrozen(changed)).toBe(true);
  });

  it('keeps within its bound', () => {
    const cache = new DecodedRecords(100 * SIZE);
    for (let i = 0; i < 1_000; i++) cache.read(bytes(i), key(i), () => record(i));
    expect(cache.count).toBeLessThanOrEqual(100);
    expect(cache.count).toBeGreaterThanOrEqual(90);
    // Every record still answers for its own key, kept or decoded again; the newest is always kept.
    let kept = 0;
    for (let i = 999; i >= 0; i--) {
      let decoded = false;
      const read = cache.read(bytes(i), key(i), () => ((decoded = true), record(i)));
      expect(read).toEqual(record(i));
      if (!decoded) kept += 1;
    }
    expect(kept).toBeGreaterThan(0);
  });

  it('keeps most of a set read in turn that is a third larger than it', () => {
    const cache = new DecodedRecords(1_500 * SIZE);
    const set = 2_000;
    let decodes = 0;
    let reads = 0;
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < set; i++) {
        cache.read(bytes(i), key(i), () => (decodes++, record(i)));
        if (round >= 2) reads++;
      }
      if (round === 1) decodes = 0;
    }
    // Random eviction keeps about half of such reads (least recently used: none).
    expect(decodes / reads).toBeLessThan(0.7);
  });
});
