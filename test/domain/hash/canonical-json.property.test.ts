/** Properties of canonicalJson (RFC 8785): agreement with the independent serializer on generated JSON, and the RFC's own number, string and sorting samples. */
import canonicalizePackage from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/domain/hash.js';
import { jcs, json, PARAMS, prng, shuffleKeys } from './harness.js';

/** Numbers from an IEEE 754 bit pattern (RFC 8785 Appendix B lists them that way). */
function fromBits(hex: string): number {
  const buffer = Buffer.from(hex, 'hex');
  return buffer.readDoubleBE(0);
}

describe('canonicalJson (RFC 8785)', () => {
  it('equals an independent RFC 8785 serialization for any JSON value', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value)).toBe(jcs(value));
      }),
      PARAMS,
    );
  });

  it('parses back to a value deep-equal to the input', () => {
    fc.assert(
      fc.property(json, (value) => {
        // JSON has no -0; compare with the input's own JSON reading.
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      PARAMS,
    );
  });

  it('does not depend on key order or on the whitespace of the input text', () => {
    fc.assert(
      fc.property(json, fc.integer(), fc.constantFrom(0, 1, 2, '\t', ' \n '), (value, seed, indent) => {
        const reordered = shuffleKeys(value, prng(seed));
        const reparsed = JSON.parse(JSON.stringify(reordered, null, indent as string | number)) as unknown;
        expect(canonicalJson(reordered)).toBe(canonicalJson(value));
        expect(canonicalJson(reparsed)).toBe(canonicalJson(value));
      }),
      PARAMS,
    );
  });

  it('is a fixed point: canonicalizing the parsed canonical form gives the same text', () => {
    fc.assert(
      fc.property(json, (value) => {
        const once = canonicalJson(value);
        expect(canonicalJson(JSON.parse(once))).toBe(once);
      }),
      PARAMS,
    );
  });

  it('formats numbers as RFC 8785 §3.2.2.3 and Appendix B say', () => {
    const samples: [number, string][] = [
      [1e21, '1e+21'],
      [0.000001, '0.000001'],
      [-0, '0'],
      [1.0, '1'],
      [1e-7, '1e-7'],
      [4.5, '4.5'],
      [2e-3, '0.002'],
      [1e30, '1e+30'],
      [0.000000000000000000000000001, '1e-27'],
      // Written as in the RFC; the literal has more digits than a double holds, which is the point.
      [Number('333333333.33333329'), '333333333.3333333'],
      [100, '100'],
      [-1.5, '-1.5'],
      [Number.MAX_SAFE_INTEGER, '9007199254740991'],
    ];
    for (const [value, expected] of samples) expect(canonicalJson(value), String(value)).toBe(expected);

    // RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
    const appendixB: [string, string][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [bits, expected] of appendixB) expect(canonicalJson(fromBits(bits)), bits).toBe(expected);
    for (const [bits, expected] of appendixB) expect(canonicalJson({ n: fromBits(bits) }), bits).toBe(`{"n":${expected}}`);
  });

  it('refuses values RFC 8785 cannot represent: NaN, ±Infinity, lone surrogates', () => {
    for (const bad of [NaN, Infinity, -Infinity, fromBits('7fffffffffffffff'), fromBits('7ff0000000000000')]) {
      expect(() => canonicalJson(bad), String(bad)).toThrow();
      expect(() => canonicalJson({ a: [bad] }), String(bad)).toThrow();
    }
    for (const bad of ['\ud800', '\udc00', 'a\ud83d', '\ude00b']) {
      expect(() => canonicalJson(bad), JSON.stringify(bad)).toThrow();
      expect(() => canonicalJson({ [bad]: 1 }), JSON.stringify(bad)).toThrow();
    }
  });

  it('escapes strings as RFC 8785 §3.2.2.2 says', () => {
    const samples: [string, string][] = [
      ['"', '"\\""'],
      ['\\', '"\\\\"'],
      ['/', '"/"'],
      ['\b\f\n\r\t', '"\\b\\f\\n\\r\\t"'],
      ['\u0000', '"\\u0000"'],
      ['\u000f', '"\\u000f"'],
      ['\u001f', '"\\u001f"'],
      ['\u007f', '"\u007f"'],
      ['\u2028\u2029', '"\u2028\u2029"'],
      ['€😀é', '"€😀é"'],
    ];
    for (const [value, expected] of samples) expect(canonicalJson(value), JSON.stringify(value)).toBe(expected);
  });

  it('reproduces the RFC 8785 §3.2.2 and §3.2.3 examples', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );

    const sorting = JSON.parse(
      '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One",' +
        ' "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", "\\u00f6": "Latin Small Letter O With Diaeresis"}',
    ) as Record<string, string>;
    const canonical = canonicalJson(sorting);
    // (Object.values would list the integer-like key "1" first, so the order is checked on the text.)
    expect(canonical).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });
});

describe('canonicalJson beside the canonicalize package', () => {
  it('produces the same bytes as canonicalize for any JSON value', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value)).toBe(canonicalizePackage(value));
      }),
      PARAMS,
    );
  });

  it('orders member names that engines order first (array indexes) and __proto__ as RFC 8785 does', () => {
    const indexes = JSON.parse('{"b":1,"10":2,"2":3,"a":{"1":4,"01":5,"4294967295":6,"4294967294":7},"-1":8,"1.5":9}') as unknown;
    expect(canonicalJson(indexes)).toBe(canonicalizePackage(indexes));
    expect(canonicalJson(indexes)).toBe('{"-1":8,"1.5":9,"10":2,"2":3,"a":{"01":5,"1":4,"4294967294":7,"4294967295":6},"b":1}');
    const proto = JSON.parse('{"z":0,"__proto__":{"x":1},"a":[{"__proto__":null}]}') as unknown;
    expect(canonicalJson(proto)).toBe('{"__proto__":{"x":1},"a":[{"__proto__":null}],"z":0}');
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(fc.nat().map(String), fc.constantFrom('__proto__', 'a', 'B', '_')), fc.jsonValue()), (value) => {
        expect(canonicalJson(value)).toBe(canonicalizePackage(value));
      }),
      PARAMS,
    );
  });

  it('produces the same bytes for objects with undefined members, toJSON values and sparse arrays', () => {
    const value = { b: undefined, a: [undefined, 1], d: new Date(0), c: { toJSON: () => ({ z: 1, y: [2] }) }, '\u00e9': 'é', '\u{1F600}': '😀', e: '\u2028\u0007' };
    expect(canonicalJson(value)).toBe(canonicalizePackage(value));
  });

  it('orders objects of many members and objects beside and inside them, each object its own members (one array of keys reused at each depth)', () => {
    const many = (prefix: string, n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${(n - i) * 7919 % 1000}`, i]));
    const value = { z: many('m', 40), a: [many('q', 3), { y: many('r', 33), b: many('s', 2) }, many('t', 50)], k: { k: { k: many('u', 5) } }, e: {} };
    expect(canonicalJson(value)).toBe(canonicalizePackage(value));
    // An object with inherited enumerable members: only its own are written, as Object.keys lists them.
    const child = Object.create({ inherited: 1 }) as Record<string, unknown>;
    child.own = 2;
    expect(canonicalJson({ child })).toBe('{"child":{"own":2}}');
  });

  it('orders the members of a value canonicalized by a getter while another value is being written', () => {
    const inner = { d: 4, c: { f: 6, e: 5 } };
    let seen: string | undefined;
    const outer = {
      b: 2,
      get a() {
        seen = canonicalJson(inner);
        return { y: 1, x: 2 };
      },
      c: { h: 1, g: 2 },
    };
    expect(canonicalJson(outer)).toBe('{"a":{"x":2,"y":1},"b":2,"c":{"g":2,"h":1}}');
    expect(seen).toBe('{"c":{"e":5,"f":6},"d":4}');
  });

  it('serialises values nested deeper than any cycle bound, as canonicalize does, and still refuses a cycle however deep', () => {
    const nest = (depth: number, wrap: (inner: unknown) => unknown): unknown => {
      let value: unknown = 'leaf';
      for (let i = 0; i < depth; i++) value = wrap(value);
      return value;
    };
    for (const value of [nest(1_500, (inner) => [inner]), nest(1_500, (inner) => ({ a: inner, b: [1] })), nest(1_500, (inner) => [0, inner])]) {
      expect(canonicalJson(value)).toBe(canonicalizePackage(value));
    }
    // The same object twice, side by side, is no cycle.
    const shared = nest(1_200, (inner) => [inner]);
    expect(canonicalJson([shared, shared])).toBe(canonicalizePackage([shared, shared]));

    // A cycle that closes 1,200 levels down, and one that closes at once.
    const root: Record<string, unknown> = {};
    let at = root;
    for (let i = 0; i < 1_200; i++) at = (at.next = {}) as Record<string, unknown>;
    at.back = root;
    const self: unknown[] = [];
    self.push(self);
    for (const cyclic of [root, self]) {
      expect(() => canonicalizePackage(cyclic)).toThrow('Circular reference');
      expect(() => canonicalJson(cyclic)).toThrow('Circular reference');
    }
  });

  it('refuses what canonicalize refuses: lone surrogates, NaN, infinities, cycles', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of ['\uD800', { ['\uDC00']: 1 }, NaN, Infinity, -Infinity, [cyclic]]) {
      expect(() => canonicalizePackage(bad)).toThrow();
      expect(() => canonicalJson(bad)).toThrow();
    }
  });
});
