/**
 * The words of full-text search (`q`): one tokenizer for what a checkpoint is
 * indexed under and for what a query asks, so the two always agree. A term is
 * a whole word, NFKC-normalized and lower-cased; there is no stemming.
 * `docs/api.md` states the rules for callers.
 *
 * @module
 */
import type { Checkpoint } from './checkpoint.js';

/** Shorter words (one letter or digit) match too much to be worth an index entry. */
export const MIN_TERM_LENGTH = 2;

/**
 * The most terms one checkpoint is indexed under, the first ones in the order
 * its text is read ({@link termsOf}). Each term is an index key written with
 * the record (about 200 bytes with its value), and an update that replaces
 * every word clears and writes one key per term: the bound keeps that to a
 * few hundred KB beside the record and its revision, inside one store
 * transaction (10,000,000 bytes). A checkpoint of a few KB has about a hundred.
 */
export const MAX_TERMS = 1_000;

/**
 * Words too common to select anything: Lucene's English stop set
 * (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`), less `a`, which is shorter than
 * {@link MIN_TERM_LENGTH} anyway.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not',
  'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was',
  'will', 'with',
]);

/** What to do about a query that {@link queryTerms} finds no word in. */
export const NO_QUERY_TERMS = 'must contain a word of at least 2 letters or digits that is not a common word such as "the" or "and"; search for a more specific word';

/**
 * A word starts with a letter or a digit and goes on through letters, digits
 * and combining marks: without the marks, words of scripts such as Devanagari
 * would fall apart into single letters.
 */
const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;

/** The search terms of a checkpoint: every word of the text `q` searches, at most {@link MAX_TERMS}. */
export function termsOf(checkpoint: Checkpoint): Set<string> {
  const terms = new Set<string>();
  forEachSearchedText(checkpoint, (text) => addTerms(text, terms));
  return terms;
}

/** The terms of a query, in the order written; empty when it holds only punctuation or stop words. */
export function queryTerms(q: string): string[] {
  const terms = new Set<string>();
  addTerms(q, terms);
  return [...terms];
}

/**
 * Calls `visit` with every string `q` searches, until it answers false:
 * items' descriptions, blockers and ids (or the item itself when it is a
 * string) in completed, pending and blocked items, the current focus, then
 * decisions and their rationale, assumptions, constraints and external
 * dependencies. Paths, labels, the recovery prompt and extensions are not
 * searched.
 */
export function forEachSearchedText(checkpoint: Checkpoint, visit: (text: string) => boolean): void {
  const state = checkpoint.executionState;
  const summary = checkpoint.contextSummary;
  const lists = [state.completedItems, state.pendingItems, state.blockedItems, [state.currentFocus], summary.keyDecisions, summary.assumptions, summary.constraints, summary.externalDependencies];
  for (const list of lists) {
    if (!list) continue;
    for (const entry of list) {
      if (typeof entry === 'string') {
        if (!visit(entry)) return;
      } else if (entry && typeof entry === 'object') {
        for (const field of TEXT_FIELDS) {
          const text = (entry as Record<string, unknown>)[field];
          if (typeof text === 'string' && !visit(text)) return;
        }
      }
    }
  }
}

const TEXT_FIELDS = ['description', 'blocker', 'decision', 'rationale', 'id'] as const;

/** Adds the terms of `text` to `terms`, in the order written; false once `terms` is full. */
function addTerms(text: string, terms: Set<string>): boolean {
  if (terms.size >= MAX_TERMS) return false;
  return addAsciiTerms(text, terms) ?? addUnicodeTerms(text, terms);
}

/**
 * The words of ASCII text, found by one pass over its character codes:
 * runs of letters and digits, lower-cased (only a word with a capital is
 * copied again), as {@link WORD} finds them in ASCII text. A create reads
 * about thirty texts; splitting them with a regular expression, after
 * lower-casing each whole, was a tenth of the event loop's time a create
 * with text that changes (`docs/performance.md`, issue 44). The pending
 * list's writer finds the same words as bytes (`EntryText` in
 * `service/repository/entry-text.ts`), and a property test holds the two
 * equal. Undefined, with
 * nothing added past the words before it, at the first character beyond
 * ASCII: such text is normalized first ({@link addUnicodeTerms}), which
 * finds the same words before that character.
 */
function addAsciiTerms(text: string, terms: Set<string>): boolean | undefined {
  const length = text.length;
  let start = -1;
  let capital = false;
  for (let i = 0; i <= length; i++) {
    const code = i < length ? text.charCodeAt(i) : 0x20;
    if (code >= 0x80) return undefined;
    if ((code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39)) {
      if (start < 0) {
        start = i;
        capital = false;
      }
      continue;
    }
    if (code >= 0x41 && code <= 0x5a) {
      if (start < 0) start = i;
      capital = true;
      continue;
    }
    if (start < 0) continue;
    if (i - start >= MIN_TERM_LENGTH) {
      const word = capital ? text.slice(start, i).toLowerCase() : text.slice(start, i);
      if (!STOP_WORDS.has(word)) {
        terms.add(word);
        if (terms.size >= MAX_TERMS) return false;
      }
    }
    start = -1;
  }
  return true;
}

/** The terms of any text: NFKC-normalized, lower-cased, words as {@link WORD} finds them. */
function addUnicodeTerms(text: string, terms: Set<string>): boolean {
  for (const [word] of text.normalize('NFKC').toLowerCase().matchAll(WORD)) {
    if (word.length < MIN_TERM_LENGTH || isOneCharacter(word) || STOP_WORDS.has(word)) continue;
    terms.add(word);
    if (terms.size >= MAX_TERMS) return false;
  }
  return true;
}

/** A letter outside the Basic Multilingual Plane: two UTF-16 units, one character. */
function isOneCharacter(word: string): boolean {
  return word.length === 2 && word.codePointAt(0)! > 0xffff;
}
