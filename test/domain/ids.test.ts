/** Ids minted by the service: valid UUIDv7, unique and strictly increasing, with the minting time in their first 48 bits. */
import { describe, expect, it } from 'vitest';
import { isUuid, newId } from '../../src/domain/ids.js';

describe('newId', () => {
  it('mints valid, unique, strictly increasing UUIDv7 values carrying the time', () => {
    const before = Date.now();
    const ids = Array.from({ length: 100_000 }, () => newId());
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      expect(isUuid(id)).toBe(true);
      expect(id[14]).toBe('7');
      expect('89ab').toContain(id[19]);
      if (i > 0) expect(id > ids[i - 1]!).toBe(true);
    }
    const msecs = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(msecs(ids[0]!)).toBeGreaterThanOrEqual(before);
    // A counter that wrapped may borrow a millisecond or two ahead.
    expect(msecs(ids[ids.length - 1]!)).toBeLessThanOrEqual(after + 2);
  });

  it('does not repeat the random bits of the pool across refills', () => {
    const tails = new Set(Array.from({ length: 2_000 }, () => newId().slice(24)));
    expect(tails.size).toBe(2_000);
  });
});
