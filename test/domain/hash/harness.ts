/** Shared harness for the checkpoint-hash properties: an independent RFC 8785 (JCS) serializer, the hash DESIGN §2 describes computed with it, the arbitraries and the key-order shuffle. */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { Checkpoint } from '../../../src/domain/checkpoint.js';

/*
 * The checkpoint hash (DESIGN §2) is the SHA-256 (hex) of the RFC 8785
 * canonical JSON of the checkpoint without `compliance.hash` and
 * `compliance.signature`. The tests check it against the independent RFC 8785
 * serializer written here, and against the RFC's own samples.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const PARAMS = { numRuns: 300 } as const;

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

export function jcs(value: unknown): string {
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

export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** What DESIGN §2 says is hashed, computed independently of src/. */
export function independentHash(checkpoint: Checkpoint): string {
  const { hash: _h, signature: _s, ...compliance } = checkpoint.compliance;
  return sha256(jcs({ ...checkpoint, compliance }));
}

// ---------------------------------------------------------------------------
// Arbitraries.
// ---------------------------------------------------------------------------

/** Full Unicode text (well-formed: no lone surrogates), with control characters and escapes. */
export const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom('"', '\\', '/', '\n', '\r', '\t', '\b', '\f', '\u0000', '\u001f', '\u007f', 'é', '€', '😀', '\u2028', 'a'), maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);

const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1e21, 1e-7, 0.000001, 5e-324, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 0.1 + 0.2, 1 / 3),
);

export const { json } = fc.letrec<{ json: Json }>((tie) => ({
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
export const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);

export const signature = fc.record({
  algorithm: fc.constant('Ed25519' as const),
  keyId: fc.string({ minLength: 1, maxLength: 10 }),
  signer: fc.string({ minLength: 1, maxLength: 10 }),
  meaning: fc.constantFrom('authorship', 'review', 'approval'),
  signedAt: isoTime,
  value: fc.base64String({ minLength: 4, maxLength: 40 }),
});

export const checkpoint: fc.Arbitrary<Checkpoint> = fc
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
export function prng(seed: number): () => number {
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
export function shuffleKeys<T>(value: T, random: () => number): T {
  if (Array.isArray(value)) return value.map((item: unknown) => shuffleKeys(item, random)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, shuffleKeys(v, random)])) as T;
}
