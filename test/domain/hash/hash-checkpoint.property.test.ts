/** Properties of hashCheckpoint (DESIGN §2): it hashes exactly the RFC 8785 form of the checkpoint without compliance.hash and compliance.signature, whatever the key order, and changes with anything else. */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../../src/domain/checkpoint.js';
import { hashCheckpoint, hashedContent } from '../../../src/domain/hash.js';
import { checkpoint, hex64, independentHash, jcs, json, PARAMS, prng, sha256, shuffleKeys, signature, text } from './harness.js';

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
        // An empty compliance is a leaf too, but a checkpoint's compliance is always an object (the schema's); its members are leaves.
        fc.pre(!(target.path.length === 1 && target.path[0] === 'compliance'));
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
