/**
 * The words of full-text search (`src/domain/terms.ts`): what a checkpoint is
 * indexed under and what a query asks for come from one tokenizer, so the
 * rules here hold for both.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCheckpoint } from '../../src/domain/changes.js';
import { checkpointInput, type Checkpoint } from '../../src/domain/checkpoint.js';
import { MAX_TERMS, queryTerms, STOP_WORDS, termsOf } from '../../src/domain/terms.js';

function checkpoint(fields: Record<string, unknown>): Checkpoint {
  const input = checkpointInput.parse({ taskId: 'task-terms', agentId: 'agent-1', ...fields });
  return buildCheckpoint(input, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', '2025-03-01T10:00:00.000Z');
}

/** The rule as written in the docs, with the Unicode-aware expression alone: the ASCII fast path must agree with it. */
function reference(text: string): string[] {
  const words = text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu) ?? [];
  return [...new Set(words.filter((word) => [...word].length >= 2 && !STOP_WORDS.has(word)))];
}

describe('queryTerms', () => {
  it('lower-cases and splits on everything but letters and digits, in the order written', () => {
    expect(queryTerms('Refactor the Widget-Factory, v2! (see #409)')).toEqual(['refactor', 'widget', 'factory', 'v2', 'see', '409']);
    expect(queryTerms('lease_superseded src/store/keyspace.ts')).toEqual(['lease', 'superseded', 'src', 'store', 'keyspace', 'ts']);
  });

  it('drops stop words, one-character words and duplicates', () => {
    expect(queryTerms('The fix for a race in the lease AND the Lease of x')).toEqual(['fix', 'race', 'lease']);
    expect(queryTerms('the and of to in is for on with')).toEqual([]);
    expect(queryTerms('a b c 1 2 3 ...')).toEqual([]);
    expect(queryTerms('?!-- ,;')).toEqual([]);
    expect(STOP_WORDS.size).toBeGreaterThanOrEqual(30);
    for (const word of STOP_WORDS) expect(queryTerms(word), word).toEqual([]);
  });

  it('normalizes Unicode (NFKC) before lower-casing, so equivalent spellings give one term', () => {
    expect(queryTerms('Café')).toEqual(queryTerms('Cafe\u0301'));
    expect(queryTerms('ＬＭＤＢ ﬁle')).toEqual(['lmdb', 'file']);
    expect(queryTerms('Привет, МИР')).toEqual(['привет', 'мир']);
    expect(queryTerms('ΑΘΗΝΑ Straße')).toEqual(['αθηνα', 'straße']);
  });

  it('keeps combining marks inside a word, so words of scripts such as Devanagari stay whole', () => {
    expect(queryTerms('हिन्दी परीक्षण')).toEqual(['हिन्दी', 'परीक्षण']);
  });

  it('counts characters, not UTF-16 units: one letter outside the BMP is too short, two are a word', () => {
    expect(queryTerms('\u{20000}')).toEqual([]);
    expect(queryTerms('\u{20000}\u{20001}')).toEqual(['\u{20000}\u{20001}']);
  });

  it('keeps long words whole (the index stores those over 256 bytes by their hash)', () => {
    const hash = 'ab'.repeat(150);
    expect(queryTerms(`commit ${hash.toUpperCase()}`)).toEqual(['commit', hash]);
  });

  it('agrees with the Unicode rule on any text, ASCII or not', () => {
    const text = fc.oneof(fc.string({ unit: 'binary-ascii', maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }));
    fc.assert(
      fc.property(text, (t) => {
        expect(queryTerms(t)).toEqual(reference(t));
        // Asked again, a text's words come from memory (the split cache): the same words.
        expect(queryTerms(t)).toEqual(reference(t));
      }),
      { numRuns: 1_000 },
    );
  });
});

describe('termsOf', () => {
  it('reads items (strings, descriptions, blockers, ids), the current focus, decisions with their rationale, assumptions, constraints and dependencies', () => {
    const terms = termsOf(
      checkpoint({
        executionState: {
          completedItems: ['completedstring', { id: 'itemid', description: 'completeddescription', files: { created: ['src/filepath.ts'] } }],
          pendingItems: [{ description: 'pendingdescription', blocker: 'pendingblocker' }],
          blockedItems: ['blockedstring'],
          currentFocus: 'focusword',
        },
        contextSummary: {
          keyDecisions: ['decisionstring', { decision: 'decisionword', rationale: 'rationaleword', by: 'decidedby' }],
          assumptions: ['assumptionword'],
          constraints: [{ description: 'constraintword' }],
          externalDependencies: ['dependencyword'],
        },
        metrics: { filesModified: ['src/metricsfile.ts'] },
        recovery: { continuationPrompt: 'promptword', rollbackInstructions: 'rollbackword' },
        labels: { labelkey: 'labelvalue' },
        extensions: { note: 'extensionword' },
      }),
    );
    expect([...terms]).toEqual([
      'completedstring',
      'completeddescription',
      'itemid',
      'pendingdescription',
      'pendingblocker',
      'blockedstring',
      'focusword',
      'decisionstring',
      'decisionword',
      'rationaleword',
      'assumptionword',
      'constraintword',
      'dependencyword',
    ]);
  });

  it('is the set of query terms of its text: each word once, whatever its case', () => {
    const terms = termsOf(checkpoint({ executionState: { completedItems: ['Lease LEASE lease', 'the lease table'] }, contextSummary: { assumptions: ['Table of leases'] } }));
    expect([...terms]).toEqual(['lease', 'table', 'leases']);
  });

  it('holds at most MAX_TERMS terms, the first ones in reading order', () => {
    const words = Array.from({ length: MAX_TERMS + 500 }, (_, i) => `word${i}`);
    const terms = termsOf(checkpoint({ executionState: { completedItems: [words.slice(0, 700).join(' ')], currentFocus: words.slice(700).join(' ') } }));
    expect(terms.size).toBe(MAX_TERMS);
    expect([...terms]).toEqual(words.slice(0, MAX_TERMS));
  });

  it('holds the first MAX_TERMS terms of many short texts, each split once and then remembered', () => {
    const items = Array.from({ length: 400 }, (_, i) => `step${i} word${2 * i} shared word${2 * i + 1} the`);
    const inOrder = [...new Set(items.flatMap((item) => item.split(' ').filter((word) => word !== 'the')))];
    expect(inOrder.length).toBeGreaterThan(MAX_TERMS);
    for (let round = 0; round < 2; round++) {
      expect([...termsOf(checkpoint({ executionState: { completedItems: items } }))]).toEqual(inOrder.slice(0, MAX_TERMS));
    }
  });

  it('is empty for a checkpoint without text', () => {
    expect(termsOf(checkpoint({})).size).toBe(0);
  });
});
