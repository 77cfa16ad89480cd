/**
 * What the console checks in the browser, held equal to the service: its
 * RFC 8785 serializer against the service's and the `canonicalize` package
 * on generated JSON, its JavaScript SHA-256 (used where a page has no Web
 * Crypto) against Node's, and the checkpoint hash it recomputes against the
 * hash the service stores.
 */
import { createHash } from 'node:crypto';
import canonicalizePackage from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../console/src/canonical.js';
import { recomputeHash } from '../../console/src/integrity.js';
import { sha256, sha256Hex, toHex } from '../../console/src/sha256.js';
import type { Checkpoint } from '../../src/domain/checkpoint.js';
import { canonicalJson, hashCheckpoint } from '../../src/domain/hash.js';
import { json, PARAMS } from '../domain/hash/harness.js';

describe('the console’s RFC 8785 serializer', () => {
  it('writes any JSON value as the service and the canonicalize package do', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalize(value)).toBe(canonicalJson(value));
        expect(canonicalize(value)).toBe(canonicalizePackage(value));
      }),
      PARAMS,
    );
  });

  it('sorts members by UTF-16 code units and writes numbers the RFC’s way', () => {
    expect(canonicalize({ '\u20ac': 1, '\r': 2, 'ö': 3, '\ud83d\ude00': 4, a: [1e21, 1e-7, -0, 0.1, 4.5] })).toBe(
      '{"\\r":2,"a":[1e+21,1e-7,0,0.1,4.5],"ö":3,"€":1,"😀":4}',
    );
  });

  it('refuses what JSON cannot hold', () => {
    expect(() => canonicalize(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalize(() => 1)).toThrow(TypeError);
  });
});

describe('the console’s SHA-256', () => {
  it('equals Node’s for every length around the block boundaries, and for a large input', () => {
    for (let length = 0; length <= 200; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      expect(toHex(sha256(bytes)), `${length} bytes`).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
    const large = new Uint8Array(1_000_003).map((_, i) => i % 251);
    expect(toHex(sha256(large))).toBe(createHash('sha256').update(large).digest('hex'));
  });

  it('equals Node’s on arbitrary text, through Web Crypto where there is one', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary' }), async (text) => {
        const expected = createHash('sha256').update(text, 'utf8').digest('hex');
        expect(toHex(sha256(new TextEncoder().encode(text)))).toBe(expected);
        expect(await sha256Hex(text)).toEqual({ hex: expected, method: 'Web Crypto' });
      }),
      { numRuns: 100 },
    );
  });
});

describe('the checkpoint hash recomputed by the console', () => {
  it('is the hash the service computes, whatever the signature says', async () => {
    const checkpoint = {
      id: '01900000-0000-7000-8000-000000000001',
      taskId: 'task-ü',
      agentId: 'agent-1',
      iteration: 1,
      schemaVersion: '1.0',
      status: 'finalized',
      finalStatus: 'completed',
      version: 3,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:01.000Z',
      executionState: { phase: 'testing', completedItems: ['a', { description: 'b', files: { created: ['x.ts'] } }] },
      contextSummary: { keyDecisions: [{ decision: 'use LMDB', rationale: 'embedded' }] },
      metrics: { contextUtilization: 0.42 },
      recovery: {},
      compliance: { retentionPolicy: 'P30D' },
      labels: { team: 'core', n: 1 },
      extensions: {},
    } as Checkpoint;
    const { hash } = hashCheckpoint(checkpoint);
    const signed = { ...checkpoint, compliance: { ...checkpoint.compliance, hash, signature: { algorithm: 'Ed25519', keyId: 'k', signer: 's', meaning: 'approval', signedAt: 't', value: 'v' } } } as Checkpoint;
    expect((await recomputeHash(signed)).hex).toBe(hash);
    expect((await recomputeHash({ ...signed, version: 4 })).hex).not.toBe(hash);
  });
});
