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
/** Text without these (ASCII text) is its own NFKC form, so normalizing can be skipped. */
const NON_ASCII = /[\u0080-\uffff]/;

/** The search terms of a checkpoint: every word of the text `q` searches, at most {@link MAX_TERMS}. */
export function termsOf(checkpoint: Checkpoint): Set<string> {
  const terms = new Set<string>();
  searchedText(checkpoint, (text) => addTerms(text, terms));
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
function searchedText(checkpoint: Checkpoint, visit: (text: string) => boolean): void {
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
  for (const word of wordsIn(text)) {
    if (terms.size >= MAX_TERMS) break;
    terms.add(word);
  }
  return terms.size < MAX_TERMS;
}

/**
 * The words of the texts read last, by text. An agent's next checkpoint
 * repeats most of its last one's items and decisions word for word, so most
 * of a create's texts were split by the create before it; looking a text up
 * costs a hash of it, splitting it several times that. Bounded, the least
 * recently used going first; long texts are split each time.
 */
const SPLIT = new Map<string, readonly string[]>();
const SPLIT_CAPACITY = 2048;
const SPLIT_MAX_LENGTH = 1024;

/** The terms of `text` in the order written, repeats included (at most {@link MAX_TERMS} distinct). */
function wordsIn(text: string): readonly string[] {
  if (text.length > SPLIT_MAX_LENGTH) return split(text);
  let words = SPLIT.get(text);
  if (words !== undefined) {
    SPLIT.delete(text);
  } else {
    words = split(text);
    if (SPLIT.size >= SPLIT_CAPACITY) SPLIT.delete(SPLIT.keys().next().value!);
  }
  SPLIT.set(text, words);
  return words;
}

function split(text: string): string[] {
  const words: string[] = [];
  if (!NON_ASCII.test(text)) addAsciiTerms(text.toLowerCase(), words);
  else {
    for (const [word] of text.normalize('NFKC').toLowerCase().matchAll(WORD)) {
      if (word.length >= MIN_TERM_LENGTH && !isOneCharacter(word) && !STOP_WORDS.has(word)) words.push(word);
    }
  }
  return words;
}

/** What separates words in lower-cased ASCII text, where {@link WORD} finds runs of `a`–`z` and `0`–`9`. */
const ASCII_SEPARATORS = /[^a-z0-9]+/;

/** The same words as {@link WORD} finds, for lower-cased ASCII text: most text is ASCII, and splitting it is faster. */
function addAsciiTerms(text: string, words: string[]): void {
  for (const word of text.split(ASCII_SEPARATORS)) {
    if (word.length < MIN_TERM_LENGTH || STOP_WORDS.has(word)) continue;
    words.push(word);
  }
}

/** A letter outside the Basic Multilingual Plane: two UTF-16 units, one character. */
function isOneCharacter(word: string): boolean {
  return word.length === 2 && word.codePointAt(0)! > 0xffff;
}
