/**
 * Properties of the checkpoint hash (DESIGN §2): SHA-256 (hex) of the
 * RFC 8785 canonical JSON of the checkpoint without `compliance.hash` and
 * `compliance.signature`. Checked against an independent RFC 8785
 * serializer written here, and against the RFC's own samples.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../src/domain/checkpoint.js';
import { canonicalJson, hashCheckpoint, hashedContent } from '../../src/domain/hash.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const PARAMS = { numRuns: 300 } as const;

// ---------------------------------------------------------------------------
// An independent RFC 8785 (JCS) serializer.
// ---------------------------------------------------------------------------

/** RFC 8785 §3.2.2.2: JSON string escaping, with lower-case \u00xx for the other control characters. */
function jcsString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (unit > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) throw new Error('lone surrogate');
      out += text[i]! + text[i + 1]!;
      i++;
      continue;
    }
    switch (unit) {
      case 0x22:
        out += '\\"';
        break;
      case 0x5c:
        out += '\\\\';
        break;
      case 0x08:
        out += '\\b';
        break;
      case 0x0c:
        out += '\\f';
        break;
      case 0x0a:
        out += '\\n';
        break;
      case 0x0d:
        out += '\\r';
        break;
      case 0x09:
        out += '\\t';
        break;
      default:
        out += unit < 0x20 ? `\\u${unit.toString(16).padStart(4, '0')}` : text[i]!;
    }
  }
  return `${out}"`;
}

/** RFC 8785 §3.2.3: property names sorted by their UTF-16 code units. */
function compareUtf16(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** RFC 8785 §3.2.2.3: numbers as ECMAScript's Number.prototype.toString, -0 as 0. */
function jcsNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error('not a finite number');
  if (Object.is(n, -0)) return '0';
  return n.toString();
}

function jcs(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return jcsNumber(value);
    case 'string':
      return jcsString(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : jcs(item))).join(',')}]`;
      const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
      entries.sort(([a], [b]) => compareUtf16(a, b));
      return `{${entries.map(([k, v]) => `${jcsString(k)}:${jcs(v)}`).join(',')}}`;
    }
    default:
      throw new Error(`no JSON form for ${typeof value}`);
  }
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** What DESIGN §2 says is hashed, computed independently of src/. */
function independentHash(checkpoint: Checkpoint): string {
  const { hash: _h, signature: _s, ...compliance } = checkpoint.compliance;
  return sha256(jcs({ ...checkpoint, compliance }));
}

// ---------------------------------------------------------------------------
// Arbitraries.
// ---------------------------------------------------------------------------

/** Full Unicode text (well-formed: no lone surrogates), with control characters and escapes. */
const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom('"', '\\', '/', '\n', '\r', '\t', '\b', '\f', '\u0000', '\u001f', '\u007f', 'é', '€', '😀', '\u2028', 'a'), maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);

const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1e21, 1e-7, 0.000001, 5e-324, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 0.1 + 0.2, 1 / 3),
);

const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    number,
    text,
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(text, tie('json'), { maxKeys: 4, noNullPrototype: true }),
  ),
}));

const jsonRecord = fc.dictionary(text, json, { maxKeys: 4, noNullPrototype: true });
const isoTime = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);

const signature = fc.record({
  algorithm: fc.constant('Ed25519' as const),
  keyId: fc.string({ minLength: 1, maxLength: 10 }),
  signer: fc.string({ minLength: 1, maxLength: 10 }),
  meaning: fc.constantFrom('authorship', 'review', 'approval'),
  signedAt: isoTime,
  value: fc.base64String({ minLength: 4, maxLength: 40 }),
});

const checkpoint: fc.Arbitrary<Checkpoint> = fc
  .record(
    {
      id: fc.uuid({ version: 7 }),
      taskId: text,
      agentId: text,
      agentType: text,
      iteration: fc.nat(),
      schemaVersion: fc.constant('1.0'),
      status: fc.constantFrom('active' as const, 'finalized' as const),
      finalStatus: fc.constantFrom('completed' as const, 'failed' as const, 'handoff' as const, 'abandoned' as const),
      version: fc.integer({ min: 1, max: 1000 }),
      createdAt: isoTime,
      updatedAt: isoTime,
      finalizedAt: isoTime,
      parentId: fc.uuid({ version: 7 }),
      executionState: fc.record(
        {
          phase: fc.constantFrom('planning' as const, 'implementing' as const, 'testing' as const, 'reviewing' as const, 'complete' as const, 'handoff' as const),
          completedItems: fc.array(fc.oneof(text, fc.record({ description: text, id: text })), { maxLength: 3 }),
          pendingItems: fc.array(text, { maxLength: 3 }),
          currentFocus: fc.option(text, { nil: null }),
        },
        { requiredKeys: [] },
      ),
      contextSummary: fc.record({ keyDecisions: fc.array(fc.oneof(text, fc.record({ decision: text, rationale: text })), { maxLength: 3 }) }, { requiredKeys: [] }),
      metrics: fc.record({ tokensConsumed: fc.nat(), contextUtilization: fc.double({ min: 0, max: 100, noNaN: true }) }, { requiredKeys: [] }),
      recovery: fc.record({ continuationPrompt: fc.option(text, { nil: null }), lastSuccessfulState: fc.option(text, { nil: null }) }, { requiredKeys: [] }),
      compliance: fc.record(
        { eventLogRef: text, hash: hex64, signature, retentionPolicy: fc.constantFrom('P30D', 'P7Y', 'PT1H'), legalHold: fc.boolean() },
        { requiredKeys: [] },
      ),
      labels: fc.dictionary(fc.stringMatching(/^[A-Za-z0-9_.\-/]{1,8}$/), fc.oneof(text, fc.integer(), fc.boolean()), { maxKeys: 4, noNullPrototype: true }),
      extensions: jsonRecord,
    },
    { requiredKeys: ['id', 'taskId', 'agentId', 'iteration', 'schemaVersion', 'status', 'version', 'createdAt', 'updatedAt', 'executionState', 'contextSummary', 'metrics', 'recovery', 'compliance', 'labels', 'extensions'] },
  )
  .map((value) => value as Checkpoint);

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------

/** A deterministic PRNG (mulberry32), so a shuffle is reproducible from fast-check's seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The same value with the members of every object in another order (arrays keep theirs). */
function shuffleKeys<T>(value: T, random: () => number): T {
  if (Array.isArray(value)) return value.map((item: unknown) => shuffleKeys(item, random)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, shuffleKeys(v, random)])) as T;
}

type Path = (string | number)[];

/** Every leaf (null, boolean, number, string, empty array or object) and its path. */
function leaves(value: unknown, path: Path = []): { path: Path; value: unknown }[] {
  if (Array.isArray(value)) {
    return value.length === 0 ? [{ path, value }] : value.flatMap((item, i) => leaves(item, [...path, i]));
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return entries.length === 0 ? [{ path, value }] : entries.flatMap(([k, v]) => leaves(v, [...path, k]));
  }
  return [{ path, value }];
}

function setAt(root: unknown, path: Path, value: unknown): void {
  let current = root as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) current = current[step] as Record<string | number, unknown>;
  current[path[path.length - 1]!] = value;
}

/** Numbers from an IEEE 754 bit pattern (RFC 8785 Appendix B lists them that way). */
function fromBits(hex: string): number {
  const buffer = Buffer.from(hex, 'hex');
  return buffer.readDoubleBE(0);
}

// ---------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------

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

describe('hashCheckpoint (DESIGN §2)', () => {
  it('equals SHA-256 of an independent RFC 8785 serialization of the checkpoint without hash and signature', () => {
    fc.assert(
      fc.property(checkpoint, (cp) => {
        const { canonical, hash } = hashCheckpoint(cp);
        const { hash: _h, signature: _s, ...compliance } = cp.compliance;
        expect(canonical).toBe(jcs({ ...cp, compliance }));
        expect(hash).toBe(independentHash(cp));
        expect(hash).toMatch(/^[0-9a-f]{64}$/);
        expect(hash).toBe(sha256(canonical));
      }),
      PARAMS,
    );
  });

  it('does not depend on key order or on the whitespace of the input', () => {
    fc.assert(
      fc.property(checkpoint, fc.integer(), fc.constantFrom(0, 2, '\t'), (cp, seed, indent) => {
        const reordered = shuffleKeys(cp, prng(seed));
        const reparsed = JSON.parse(JSON.stringify(reordered, null, indent as string | number)) as Checkpoint;
        const { hash } = hashCheckpoint(cp);
        expect(hashCheckpoint(reordered).hash).toBe(hash);
        expect(hashCheckpoint(reparsed).hash).toBe(hash);
      }),
      PARAMS,
    );
  });

  it('changes when any leaf value changes', () => {
    fc.assert(
      fc.property(checkpoint, fc.nat(), json, (cp, pick, replacement) => {
        const content = hashedContent(cp);
        const all = leaves(content);
        const target = all[pick % all.length]!;
        // The new value must differ as JSON does (-0 and 0 are the same number in JSON, so the same hash).
        fc.pre(jcs(replacement) !== jcs(target.value));
        const changed = structuredClone(cp);
        if (target.path.length === 0) return;
        setAt(changed, target.path, replacement);
        expect(hashCheckpoint(changed).hash).not.toBe(hashCheckpoint(cp).hash);
      }),
      PARAMS,
    );
  });

  it('changes when a member is added or removed anywhere outside compliance.hash and compliance.signature', () => {
    fc.assert(
      fc.property(checkpoint, text, json, (cp, name, value) => {
        const added = structuredClone(cp);
        fc.pre(!Object.hasOwn(added.extensions, name));
        added.extensions[name] = value;
        expect(hashCheckpoint(added).hash).not.toBe(hashCheckpoint(cp).hash);
        const removed = structuredClone(cp);
        delete (removed as Partial<Checkpoint>).labels;
        expect(hashCheckpoint(removed).hash).not.toBe(hashCheckpoint(cp).hash);
      }),
      PARAMS,
    );
  });

  it('ignores compliance.hash and compliance.signature (and only those)', () => {
    fc.assert(
      fc.property(checkpoint, fc.option(hex64, { nil: undefined }), fc.option(signature, { nil: undefined }), (cp, hash, sig) => {
        const changed = structuredClone(cp);
        if (hash === undefined) delete changed.compliance.hash;
        else changed.compliance.hash = hash;
        if (sig === undefined) delete changed.compliance.signature;
        else changed.compliance.signature = sig;
        const before = hashCheckpoint(cp);
        const after = hashCheckpoint(changed);
        expect(after.hash).toBe(before.hash);
        expect(after.canonical).toBe(before.canonical);
        // Neither appears in the hashed bytes.
        const compliance = (JSON.parse(after.canonical) as { compliance: Record<string, unknown> }).compliance;
        expect(compliance).not.toHaveProperty('hash');
        expect(compliance).not.toHaveProperty('signature');
        // The other compliance members are covered.
        const other = structuredClone(cp);
        other.compliance.eventLogRef = `${cp.compliance.eventLogRef ?? ''}x`;
        expect(hashCheckpoint(other).hash).not.toBe(before.hash);
      }),
      PARAMS,
    );
  });

  it('does not change the checkpoint it hashes', () => {
    fc.assert(
      fc.property(checkpoint, (cp) => {
        const before = structuredClone(cp);
        hashCheckpoint(cp);
        expect(cp).toEqual(before);
      }),
      PARAMS,
    );
  });

  it('the canonical form parses back to the hashed content', () => {
    fc.assert(
      fc.property(checkpoint, (cp) => {
        const { canonical } = hashCheckpoint(cp);
        expect(JSON.parse(canonical)).toEqual(JSON.parse(JSON.stringify(hashedContent(cp))));
        expect(canonical).not.toMatch(/^\s|\s$/);
      }),
      PARAMS,
    );
  });

  it('a fixed checkpoint has a fixed, independently computed hash', () => {
    const cp: Checkpoint = {
      id: '01890a5d-ac96-774b-bcce-b302099a8057',
      taskId: 'task-1',
      agentId: 'agent-1',
      iteration: 1,
      schemaVersion: '1.0',
      status: 'active',
      version: 1,
      createdAt: '2025-01-01T00:00:00.000Z',
      updatedAt: '2025-01-01T00:00:00.000Z',
      executionState: { phase: 'implementing', completedItems: ['a'], pendingItems: [] },
      contextSummary: {},
      metrics: { contextUtilization: 0.5 },
      recovery: {},
      compliance: { hash: 'f'.repeat(64) },
      labels: { team: 'core' },
      extensions: { n: 1e21, s: '€\n' },
    };
    const expected =
      '{"agentId":"agent-1","compliance":{},"contextSummary":{},"createdAt":"2025-01-01T00:00:00.000Z",' +
      '"executionState":{"completedItems":["a"],"pendingItems":[],"phase":"implementing"},"extensions":{"n":1e+21,"s":"€\\n"},' +
      '"id":"01890a5d-ac96-774b-bcce-b302099a8057","iteration":1,"labels":{"team":"core"},"metrics":{"contextUtilization":0.5},' +
      '"recovery":{},"schemaVersion":"1.0","status":"active","taskId":"task-1","updatedAt":"2025-01-01T00:00:00.000Z","version":1}';
    const { canonical, hash } = hashCheckpoint(cp);
    expect(canonical).toBe(expected);
    expect(hash).toBe(createHash('sha256').update(Buffer.from(expected, 'utf8')).digest('hex'));
  });
});
