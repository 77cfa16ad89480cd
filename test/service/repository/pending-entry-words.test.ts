/**
 * A full-text pending entry read back (`PendingTermRows.entryOf`) gives the
 * words, the position before it and the index lines that were written, in
 * their order: the long words of an ASCII entry (blinded words, `file:`
 * paths) are read from the value's bytes rather than split from its text,
 * so their offsets in the value must land on each word exactly, whatever
 * the MessagePack head's size; an entry with a character beyond ASCII is
 * read from its text. Through a real LMDB store.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeferredEntry, IndexPosition } from '../../../src/service/repository/indexes.js';
import { asciiStringAt } from '../../../src/service/repository/pending-terms.js';
import { Repository } from '../../../src/service/repository/repository.js';
import { encodeValue } from '../../../src/store/keyspace.js';
import { serviceHarness, type ServiceHarness } from '../service-context.js';

let harness: ServiceHarness;
beforeAll(async () => {
  harness = await serviceHarness();
});
afterAll(async () => harness?.close());

const PREVIOUS: IndexPosition = { createdAt: '2025-03-01T09:59:59.000Z', checkpointId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a50' };
let serial = 0;

/** Writes one entry with `words` and `index` under a fresh tenant, and reads the list back. */
async function roundTrip(words: string[], index: DeferredEntry[], previous: IndexPosition | undefined) {
  const tenant = `entry-words-${++serial}`;
  const at: IndexPosition = { createdAt: '2025-03-01T10:00:00.000Z', checkpointId: `0190a1b2-c3d4-7e5f-8a9b-${String(serial).padStart(12, '0')}` };
  await harness.store.transact(async (tx) => new Repository(tx, tenant).terms.pending.add('task-1', at, previous, words, index));
  const { entries } = await harness.store.transact((tx) => new Repository(tx, tenant).terms.pending.list(10), { readOnly: true });
  expect(entries).toHaveLength(1);
  return entries[0]!;
}

const BLINDED = ['~AbCdEfGhIjKlMnOp', '~0123456789-_abcd', '~zzzzzzzzzzzzzzzz'];
const INDEX: DeferredEntry[] = [
  { name: 'file', value: 'src/a b/c.ts', blind: false },
  { name: 'label', value: '~QrStUvWxYz012345', blind: true },
];

describe('a pending entry read back', () => {
  it('gives blinded and file words, short words and index lines as written', async () => {
    const words = ['step', ...BLINDED, 'file:src/some path/module.ts', 'abcdefghijklm', 'abcdefghijkl', 'x'];
    const entry = await roundTrip(words, INDEX, PREVIOUS);
    expect(entry.words).toEqual(words);
    expect(entry.index).toEqual(INDEX);
    expect(entry.previous).toEqual(PREVIOUS);
  });

  it("reads a task's first entry (no position before it) and one with a word beyond ASCII", async () => {
    const first = await roundTrip([...BLINDED, 'first'], [], undefined);
    expect(first.previous).toBeUndefined();
    expect(first.words).toEqual([...BLINDED, 'first']);
    const beyond = ['café-au-lait-menu', ...BLINDED, 'file:docs/résumé-long.md'];
    expect((await roundTrip(beyond, INDEX, PREVIOUS)).words).toEqual(beyond);
  });

  it('finds every word of entries from a hundred to seventy thousand characters', async () => {
    for (const count of [2, 8, 3_000, 4_000]) {
      const words = Array.from({ length: count }, (_, i) => `~${String(i).padStart(16, 'w')}`);
      expect((await roundTrip(words, INDEX, PREVIOUS)).words).toEqual(words);
    }
  });

  it('gives back any list of words, ASCII or not', async () => {
    const word = fc.oneof(fc.stringMatching(/^[a-z0-9~_:.-]{1,30}$/), fc.stringMatching(/^[a-zé€ ]{1,20}$/).filter((w) => w.trim() === w && w !== ''));
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(word, { minLength: 1, maxLength: 40 }), fc.boolean(), async (words, withPrevious) => {
        const entry = await roundTrip(words, INDEX, withPrevious ? PREVIOUS : undefined);
        expect(entry.words).toEqual(words);
        expect(entry.index).toEqual(INDEX);
      }),
      { numRuns: 60 },
    );
  });
});

describe('asciiStringAt', () => {
  it('answers where an ASCII string starts after each size of MessagePack head', () => {
    for (const length of [0, 1, 31, 32, 255, 256, 65_535, 65_536]) {
      const text = 'a'.repeat(length);
      const value = Buffer.from(encodeValue(text));
      expect(asciiStringAt(value, length)).toBe(value.length - length);
      expect(value.subarray(asciiStringAt(value, length)).toString('latin1')).toBe(text);
    }
  });

  it('answers 0 for text beyond ASCII, another length, or a value that is not a MessagePack string', () => {
    const accented = 'caf\u00e9 menu';
    expect(asciiStringAt(Buffer.from(encodeValue(accented)), accented.length)).toBe(0);
    const plain = Buffer.from(encodeValue('plain words'));
    expect(asciiStringAt(plain, 10)).toBe(0);
    expect(asciiStringAt(Buffer.concat([Buffer.from([0xc1, 0x00, 0x01]), Buffer.from('abcdefgh')]), 8)).toBe(0);
    expect(asciiStringAt(Buffer.from(encodeValue(['list'])), 4)).toBe(0);
  });
});
