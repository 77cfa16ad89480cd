/**
 * `joinedText` (`src/http/answer-text.ts`): a long answer's pieces written
 * into one buffer are exactly the UTF-8 of the pieces joined, whatever
 * characters they hold (one to four bytes each, a piece longer than the
 * room first made for it, a buffer grown more than once), and a short
 * answer stays the joined string.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { joinedText, LARGE_ANSWER_CHARS } from '../../src/http/answer-text.js';

/** Text of ASCII and of characters of two, three and four UTF-8 bytes. */
const text = fc.array(fc.constantFrom('a', '"', '{', 'é', '€', 'コ', '𝄞', '\u0000', '\u2028'), { maxLength: 400 }).map((chars) => chars.join(''));

describe('joinedText', () => {
  it('answers the joined string while the pieces are short', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 20 }), (pieces) => {
        expect(joinedText(pieces)).toBe(pieces.join(''));
      }),
    );
  });

  it('answers the UTF-8 bytes of the joined pieces once they are long, wherever the wide characters are', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 30 }), fc.nat({ max: 3 }), fc.constantFrom('a', 'é', '€', '𝄞'), (pieces, at, wide) => {
        // A long piece of one character repeated, so that the answer is long and one piece may be mostly wide.
        const long = wide.repeat(Math.ceil((LARGE_ANSWER_CHARS + 1) / wide.length));
        const all = [...pieces];
        all.splice(Math.min(at, all.length), 0, long);
        const joined = joinedText(all);
        expect(Buffer.isBuffer(joined)).toBe(true);
        expect(Buffer.from(all.join(''), 'utf8').equals(joined as Buffer)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('grows the buffer as often as wide text needs: many long pieces each of four-byte characters', () => {
    const pieces = Array.from({ length: 12 }, (_, i) => `${i}:${'𝄞'.repeat(20_000)}`);
    const joined = joinedText(pieces) as Buffer;
    expect(joined.length).toBe(Buffer.byteLength(pieces.join('')));
    expect(joined.toString('utf8')).toBe(pieces.join(''));
  });
});
