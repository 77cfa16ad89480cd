/**
 * A new checkpoint's pending entry written as bytes (`entry-text.ts`) is the
 * entry the strings' way writes: the words `termsOf` finds, in its order,
 * then the file words (from the paths' characters, or as strings for a path
 * it does not take) and the index lines, encoded by the list's codec. Any
 * checkpoint it does not take (text beyond ASCII, a word indexed by its
 * hash, text that is not well-formed) it answers undefined for.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCheckpoint } from '../../../src/domain/changes.js';
import { checkpointInput, type Checkpoint } from '../../../src/domain/checkpoint.js';
import { MAX_TERMS, STOP_WORDS, termsOf } from '../../../src/domain/terms.js';
import { randomBytes } from 'node:crypto';
import { BlindTable } from '../../../src/crypto/blind-table.js';
import { Blinder } from '../../../src/crypto/keyring.js';
import { EntryText, type FileWords } from '../../../src/service/repository/entry-text.js';
import { fileWord, indexTerm, type DeferredEntry, type IndexPosition } from '../../../src/service/repository/indexes.js';
import { indexLine } from '../../../src/service/repository/pending-terms.js';
import { encodeValue } from '../../../src/store/keyspace.js';

function checkpoint(fields: Record<string, unknown>): Checkpoint {
  const input = checkpointInput.parse({ taskId: 'task-entry', agentId: 'agent-1', ...fields });
  return buildCheckpoint(input, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', '2025-03-01T10:00:00.000Z');
}

/** The entry as `PendingTermRows.add` writes it from `termsOf`'s words (each blinded by `blind`, when given). */
function asStrings(cp: Checkpoint, previous: IndexPosition | undefined, fileWords: string[], index: DeferredEntry[], blind?: (word: string) => string): Buffer {
  let text = previous === undefined ? '' : `${previous.createdAt} ${previous.checkpointId}`;
  const terms = [...termsOf(cp)].map((word) => (blind === undefined ? word : blind(word)));
  for (const word of new Set([...terms, ...fileWords])) text += `\n${word}`;
  for (const entry of index) text += `\n${indexLine(entry)}`;
  return Buffer.from(encodeValue(text));
}

/** A path's word as `TermRows.word` spells it: `fileWord`, `indexTerm`, then blinded when encryption is on. */
function wordOf(path: string, blind?: (word: string) => string): string {
  const word = indexTerm(fileWord(path));
  return blind === undefined ? word : blind(word);
}

/** The file words `TermRows.enqueue` hands the writer. */
function filesOf(paths: string[], blind?: (word: string) => string): FileWords {
  return { paths: new Set(paths), word: (path) => wordOf(path, blind) };
}

/** The same words as the strings' way writes them, each once. */
function wordsOf(paths: string[], blind?: (word: string) => string): string[] {
  return [...new Set(paths)].map((path) => wordOf(path, blind));
}

const NO_FILES = filesOf([]);

// Paths made to hit every rule of a file word: escaped characters, a character beyond ASCII, paths and words long enough to be indexed by their hash.
const pathArbitrary = fc.oneof(
  fc.constantFrom('src/a.ts', 'docs/b c.md', 'x%y', 'line\nbreak', 'café/menu.ts', `deep/${'d'.repeat(246)}`, `deep/${'d'.repeat(247)}`, `deep/${'%'.repeat(84)}`, 'p'.repeat(257)),
  fc.stringMatching(/^[a-z0-9/._ %-]{1,40}$/),
);

const PREVIOUS: IndexPosition = { createdAt: '2025-03-01T09:59:59.000Z', checkpointId: 'cp-before' };
const INDEX: DeferredEntry[] = [
  { name: 'agent', value: 'agent-1', blind: false },
  { name: 'label', value: 'team=core%\nline', blind: false },
];

// ASCII text made to hit every rule: capitals, digits, punctuation between words, one-letter words, stop words, repeats.
const token = fc.oneof(
  fc.constantFrom(...STOP_WORDS, 'Lease', 'LEASE', 'lease', 'x', '7', 'v2', 'Widget-Factory', 'a_b', 'r2d2'),
  fc.stringMatching(/^[A-Za-z0-9]{1,12}$/),
  fc.constantFrom(' ', '  ', ', ', '.', '/', '-', '\n', '\t', '#'),
);
const asciiText = fc.array(token, { maxLength: 40 }).map((parts) => parts.join(' '));
const item = fc.record({ id: fc.stringMatching(/^[a-z0-9-]{1,10}$/), description: asciiText });
const asciiCheckpoint = fc.record({
  completed: fc.array(item, { maxLength: 4 }),
  pending: fc.array(item, { maxLength: 4 }),
  focus: asciiText,
  decisions: fc.array(fc.record({ decision: asciiText, rationale: asciiText }), { maxLength: 3 }),
  assumptions: fc.array(asciiText, { maxLength: 3 }),
});

function fromSpec(spec: typeof asciiCheckpoint extends fc.Arbitrary<infer T> ? T : never): Checkpoint {
  return checkpoint({
    executionState: {
      completedItems: spec.completed,
      pendingItems: spec.pending,
      currentFocus: spec.focus,
    },
    contextSummary: { keyDecisions: spec.decisions, assumptions: spec.assumptions },
  });
}

describe('EntryText', () => {
  it('writes the bytes the strings way writes, for any ASCII checkpoint', () => {
    const writer = new EntryText();
    fc.assert(
      fc.property(asciiCheckpoint, fc.boolean(), fc.array(pathArbitrary, { maxLength: 6 }), (spec, first, paths) => {
        const cp = fromSpec(spec);
        const previous = first ? undefined : PREVIOUS;
        const written = writer.write(cp, previous, filesOf(paths), INDEX);
        expect(written).toBeDefined();
        expect(written!.equals(asStrings(cp, previous, wordsOf(paths), INDEX))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('writes each word blinded, as the strings way does, when encryption at rest is on', () => {
    const writer = new EntryText();
    const blinder = new Blinder(randomBytes(32));
    const blind = (word: string): string => blinder.blind(word);
    const table = new BlindTable(blind);
    fc.assert(
      fc.property(asciiCheckpoint, fc.boolean(), fc.array(pathArbitrary, { maxLength: 6 }), (spec, first, paths) => {
        const cp = fromSpec(spec);
        const previous = first ? undefined : PREVIOUS;
        const index: DeferredEntry[] = [{ name: 'agent', value: blind('agent-1'), blind: true }];
        const written = writer.write(cp, previous, filesOf(paths, blind), index, table);
        expect(written!.equals(asStrings(cp, previous, wordsOf(paths, blind), index, blind))).toBe(true);
        // The plain entry of the same checkpoint, written next, holds no blinded word.
        expect(writer.write(cp, previous, filesOf(paths), [])!.equals(asStrings(cp, previous, wordsOf(paths), []))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('frames short and long texts as the codec does (fixstr, str 8, str 16, str 32)', () => {
    const writer = new EntryText();
    const heads = new Set<string>();
    // Up to a thousand words of 120 letters: over 65,535 bytes.
    for (const [words, width] of [[0, 2], [3, 2], [30, 4], [500, 6], [1_000, 120]] as const) {
      const all = Array.from({ length: words }, (_, n) => `w${n.toString(36)}`.padEnd(width, 'q'));
      const pendingItems = Array.from({ length: Math.ceil(words / 100) }, (_, n) => ({ id: `p${n}`, description: all.slice(n * 100, n * 100 + 100).join(' ') }));
      const cp = checkpoint({ executionState: { pendingItems } });
      const written = writer.write(cp, undefined, NO_FILES, []);
      expect(written!.equals(asStrings(cp, undefined, [], [])), `${words} words`).toBe(true);
      heads.add(written![0]! <= 0xbf ? 'fixstr' : written![0]!.toString(16));
    }
    expect([...heads].sort()).toEqual(['d9', 'da', 'db', 'fixstr']);
  });

  it('keeps the first MAX_TERMS words and no more, as termsOf does', () => {
    const text = Array.from({ length: MAX_TERMS + 50 }, (_, n) => `word${n}`).join(' ');
    const cp = checkpoint({ executionState: { currentFocus: text, pendingItems: [{ id: 'p1', description: 'later words' }] } });
    const written = new EntryText().write(cp, PREVIOUS, NO_FILES, []);
    expect(written!.equals(asStrings(cp, PREVIOUS, [], []))).toBe(true);
    expect(termsOf(cp).size).toBe(MAX_TERMS);
  });

  it('leaves to the strings way what it does not take, and takes the next checkpoint again', () => {
    const writer = new EntryText();
    const plain = checkpoint({ executionState: { currentFocus: 'plain words here' } });
    expect(writer.write(checkpoint({ executionState: { currentFocus: 'Café au lait' } }), PREVIOUS, NO_FILES, [])).toBeUndefined();
    expect(writer.write(checkpoint({ executionState: { currentFocus: `short ${'x'.repeat(300)}` } }), PREVIOUS, NO_FILES, [])).toBeUndefined();
    expect(writer.write(plain, PREVIOUS, filesOf(['bad\ud800path']), [])).toBeUndefined();
    expect(writer.write(plain, PREVIOUS, NO_FILES, [{ name: 'agent', value: 'agent-\udc00', blind: false }])).toBeUndefined();
    expect(writer.write(plain, PREVIOUS, NO_FILES, [])!.equals(asStrings(plain, PREVIOUS, [], []))).toBe(true);
  });
});
