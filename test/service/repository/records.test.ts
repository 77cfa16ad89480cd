import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../../src/domain/checkpoint.js';
import { buildCheckpoint } from '../../../src/domain/changes.js';
import { toStored, verifyStored } from '../../../src/service/repository/records.js';

const json = fc.jsonValue({ maxDepth: 3 });

describe('stored checkpoints answered from their stored text', () => {
  it('answer JSON that parses to exactly the verified checkpoint, whatever the content holds', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.option(fc.string(), { nil: undefined }),
        fc.dictionary(fc.string(), json),
        fc.option(fc.record({ eventLogRef: fc.string(), retentionPolicy: fc.constant('P30D') }), { nil: undefined }),
        fc.boolean(),
        (agentId, agentType, extensions, compliance, signed) => {
          const input = {
            taskId: 'task',
            agentId: agentId || 'a',
            ...(agentType ? { agentType } : {}),
            // Text that looks like the marker the answer is spliced at, inside strings and keys.
            extensions: { ...extensions, compliance: { '"compliance":{': '"compliance":{}' } },
            ...(compliance ? { compliance } : {}),
          };
          const checkpoint: Checkpoint = buildCheckpoint(input, '01a2009d-98b4-7482-b3ad-f317ff302b0f', '2026-11-22T00:00:00.000Z');
          const { stored } = toStored(checkpoint);
          if (signed) stored.s = { algorithm: 'Ed25519', keyId: 'k', signer: 's', meaning: 'approval', signedAt: '2026-11-22T00:00:00.000Z', value: 'AA==' };
          const verified = verifyStored(stored);
          expect(verified.ok).toBe(true);
          if (!verified.ok) return;
          expect(JSON.parse(verified.doc.json)).toEqual(verified.doc.checkpoint);
          expect(verified.doc.version).toBe(1);
          expect(verified.doc.checkpoint.compliance.hash).toBe(stored.h);
          expect(verified.doc.checkpoint.compliance.signature).toEqual(stored.s);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses a record whose text no longer matches its hash', () => {
    const { stored } = toStored(buildCheckpoint({ taskId: 't', agentId: 'a' }, '01a2009d-98b4-7482-b3ad-f317ff302b0f', '2026-11-22T00:00:00.000Z'));
    expect(verifyStored({ ...stored, c: stored.c.replace('"a"', '"b"') })).toEqual({ ok: false, reason: 'hash mismatch' });
    expect(verifyStored('garbage')).toEqual({ ok: false, reason: 'unreadable record' });
  });
});

describe('verifying a stored record', () => {
  const checkpoint = buildCheckpoint({ taskId: 'task', agentId: 'a' }, '01a2009d-98b4-7482-b3ad-f317ff302b0f', '2026-11-22T00:00:00.000Z');

  it('hashes a record that can still change on every check: one changed after a check is caught', () => {
    const { stored } = toStored(checkpoint);
    expect(verifyStored(stored).ok).toBe(true);
    stored.c = stored.c.replace('"agentId":"a"', '"agentId":"b"');
    expect(verifyStored(stored)).toEqual({ ok: false, reason: 'hash mismatch' });
  });

  it('refuses a frozen record whose text does not match, however often it is checked', () => {
    const { stored } = toStored(checkpoint);
    const forged = Object.freeze({ ...stored, c: stored.c.replace('"agentId":"a"', '"agentId":"b"') });
    for (let i = 0; i < 3; i++) expect(verifyStored(forged)).toEqual({ ok: false, reason: 'hash mismatch' });
    expect(verifyStored(Object.freeze({ ...stored })).ok).toBe(true);
  });
});
