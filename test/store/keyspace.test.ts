import fc from 'fast-check';
import * as tuple from 'fdb-tuple';
import { describe, expect, it } from 'vitest';
import { packString, packStringBetween, Subspace, unpackStrings, type KeyPart } from '../../src/store/keyspace.js';

describe('tuple keys', () => {
  it('packs a string exactly as fdb-tuple does, NUL bytes and all unicode included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        expect(packString(value).equals(tuple.pack([value]))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
    expect(packString('a\u0000b').equals(tuple.pack(['a\u0000b']))).toBe(true);
  });

  it('packs a string between a prefix and a suffix as their concatenation', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.string({ unit: 'binary' }), fc.uint8Array({ maxLength: 40 }), (prefix, value, suffix) => {
        const expected = Buffer.concat([prefix, tuple.pack([value]), suffix]);
        expect(packStringBetween(Buffer.from(prefix), value, Buffer.from(suffix)).equals(expected)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('unpacks a key of packed strings as fdb-tuple does, and refuses any other part', () => {
    const prefix = tuple.pack(['baton', 't', 'tr']);
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 5 }), (parts) => {
        const key = Buffer.concat([prefix, tuple.pack(parts)]);
        expect(unpackStrings(key, prefix.length)).toEqual(tuple.unpack(key.subarray(prefix.length)));
      }),
      { numRuns: 2_000 },
    );
    expect(unpackStrings(Buffer.concat([prefix, tuple.pack(['a', 7])]), prefix.length)).toBeUndefined();
    expect(unpackStrings(Buffer.concat([prefix, Buffer.from([0x02, 0x61])]), prefix.length)).toBeUndefined();
  });

  it('packs tuples of strings exactly as fdb-tuple does, NUL bytes and all unicode included', () => {
    const space = new Subspace(tuple.pack(['baton', 't', 'tr']));
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 5 }), (parts) => {
        const key = space.pack(...parts);
        expect(key.equals(Buffer.concat([space.prefix, tuple.pack(parts)]))).toBe(true);
        expect(space.unpack(key)).toEqual(parts);
      }),
      { numRuns: 2_000 },
    );
    expect(space.pack('a\u0000b', 'c').equals(Buffer.concat([space.prefix, tuple.pack(['a\u0000b', 'c'])]))).toBe(true);
  });

  it('packs mixed tuples exactly as fdb-tuple does, and unpacks them back', () => {
    const part = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)) as fc.Arbitrary<KeyPart>;
    const space = new Subspace(tuple.pack(['baton', 't']));
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 5 }), (parts) => {
        const key = space.pack(...parts);
        expect(key.equals(Buffer.concat([space.prefix, tuple.pack(parts as tuple.TupleItem[])]))).toBe(true);
        expect(space.unpack(key)).toEqual(parts);
      }),
      { numRuns: 1_000 },
    );
  });
});
