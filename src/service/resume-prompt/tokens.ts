/**
 * Token counting for the resume prompt, with the o200k_base encoding that
 * `gpt-tokenizer` ships in pure JavaScript. Checkpoint text is data: the
 * spellings of special tokens (`<|endoftext|>`) count as the plain text they
 * are, never as control tokens and never as an error.
 *
 * The encoding's vocabulary takes about 65 MB once loaded, so it is loaded on
 * first use (the first resume prompt of the process, about 0.2 s), not at
 * start: a service that is never asked for a prompt never holds it.
 *
 * @module
 */
import { createRequire } from 'node:module';

type Encoding = typeof import('gpt-tokenizer/encoding/o200k_base');

let loaded: Encoding | undefined;

function encoding(): Encoding {
  loaded ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as Encoding;
  return loaded;
}

const countTokens: Encoding['countTokens'] = (text, options) => encoding().countTokens(text, options);
const encode: Encoding['encode'] = (text, options) => encoding().encode(text, options);
const decode: Encoding['decode'] = (tokens) => encoding().decode(tokens);

const PLAIN = { disallowedSpecial: new Set<string>() };

/** The longest run of letters or of symbols kept whole; see `tame`. */
export const MAX_RUN = 100;
/** The longest run of whitespace kept; see `tame`. */
const MAX_SPACE_RUN = 64;
/** More characters than any one token covers once `tame` has bounded the runs. */
const CHARS_PER_TOKEN_BOUND = 128;

/** The number of tokens of `text`. */
export function tokenCount(text: string): number {
  return text === '' ? 0 : countTokens(text, PLAIN);
}

/**
 * Text made safe and cheap to count. Byte-pair encoding costs the square of
 * the length of each pre-token, and a pre-token is a run of letters, of
 * symbols or of whitespace: a 500,000-letter word takes minutes. Runs longer
 * than `MAX_RUN` letters or symbols are therefore broken with a space, long
 * whitespace is shortened, line endings become `\n`, and control characters
 * (other than tab and newline) become spaces. Text people write is unchanged.
 */
export function tame(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/(?![\t\n])\p{Cc}/gu, ' ')
    .replace(/\s{65,}/g, (run) => (run.includes('\n') ? '\n\n' : run.slice(0, MAX_SPACE_RUN)))
    .replace(/\n{3,}/g, '\n\n')
    .replace(/[\p{L}\p{M}]{101,}|[^\s\p{L}\p{N}]{101,}/gu, breakRun);
}

function breakRun(run: string): string {
  const points = Array.from(run);
  const parts: string[] = [];
  for (let i = 0; i < points.length; i += MAX_RUN) parts.push(points.slice(i, i + MAX_RUN).join(''));
  return parts.join(' ');
}

/** Counts blocks once each: the fitting loop renders the same blocks many times. */
export class TokenCounter {
  private readonly known = new Map<string, number>();

  count(block: string): number {
    let n = this.known.get(block);
    if (n === undefined) {
      n = tokenCount(block);
      this.known.set(block, n);
    }
    return n;
  }

  /**
   * The tokens of blocks joined without separators. Every block starts with a
   * character that is not whitespace and ends with a newline, so no
   * pre-token of the joined text spans two blocks, and the count of the
   * joined text is the sum of the blocks' counts (the caller still checks
   * the final text).
   */
  total(blocks: readonly string[]): number {
    let sum = 0;
    for (const block of blocks) sum += this.count(block);
    return sum;
  }
}

const ELLIPSIS = '…';

/**
 * Cuts text to a number of tokens, remembering each text's encoding: the
 * fitting cuts the same entries to many lengths while it searches.
 */
export class Cutter {
  private readonly encodings = new Map<string, { chars: number; tokens: number[] }>();

  /**
   * `text` cut to at most `max` tokens, ending in `mark` ("…") when it was
   * cut; '' when nothing fits. The cut falls on a character boundary of the
   * original text (a token may hold part of a character).
   */
  cut(text: string, max: number, mark = ELLIPSIS): string {
    if (max < 1 || text === '') return '';
    const tokens = this.encodingOf(text, max);
    if (tokens.length <= max && this.encodings.get(text)!.chars === text.length) return text;
    let keep = mark === '' ? max : max - 1;
    while (keep > 0) {
      const cut = trimEnd(commonPrefix(text, decode(tokens.slice(0, keep))));
      if (cut !== '') {
        const candidate = cut + mark;
        const over = tokenCount(candidate) - max;
        if (over <= 0) return candidate;
        keep -= over;
      } else {
        keep -= 1;
      }
    }
    return mark !== '' && tokenCount(mark) <= max ? mark : '';
  }

  /** The tokens of a prefix of `text` long enough to hold more than `max` tokens (or all of it). */
  private encodingOf(text: string, max: number): number[] {
    // Once `tame` has bounded the runs, this many characters hold more than `max` tokens.
    const chars = Math.min(text.length, (max + 2) * CHARS_PER_TOKEN_BOUND);
    const known = this.encodings.get(text);
    if (known !== undefined && known.chars >= chars) return known.tokens;
    const tokens = encode(text.slice(0, chars), PLAIN);
    this.encodings.set(text, { chars, tokens });
    return tokens;
  }
}

/** `text` cut to at most `max` tokens; see `Cutter.cut`. */
export function cutToTokens(text: string, max: number, mark = ELLIPSIS): string {
  return new Cutter().cut(text, max, mark);
}

/** The longest prefix of `original` that `decoded` agrees with, never ending inside a surrogate pair. */
function commonPrefix(original: string, decoded: string): string {
  const limit = Math.min(original.length, decoded.length);
  let i = 0;
  while (i < limit && original.charCodeAt(i) === decoded.charCodeAt(i)) i += 1;
  const last = original.charCodeAt(i - 1);
  if (i > 0 && last >= 0xd800 && last <= 0xdbff) i -= 1;
  return original.slice(0, i);
}

function trimEnd(text: string): string {
  return text.replace(/\s+$/u, '');
}
