/**
 * The table of blinded words (`src/crypto/blind-table.ts`) answers for a
 * word's bytes exactly what the `Blinder` answers for the word, whether the
 * word is new, held, or held again after the table filled and started over,
 * and whatever other words share its hash.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BLINDED_BYTES, BlindTable } from '../../src/crypto/blind-table.js';
import { Blinder } from '../../src/crypto/keyring.js';

function blindOf(table: BlindTable, word: string, hash: number): string {
  const bytes = Buffer.from(`..${word}..`, 'latin1');
  const out = Buffer.alloc(BLINDED_BYTES + 4, 0x2e);
  table.blindInto(bytes, 2, word.length, hash, out, 2);
  expect(out.subarray(0, 2).toString('latin1') + out.subarray(2 + BLINDED_BYTES).toString('latin1'), 'bytes written outside the slot').toBe('....');
  return out.toString('latin1', 2, 2 + BLINDED_BYTES);
}

/** A table over a fresh `Blinder`, counting the words it asks the `Blinder` for. */
function countingTable(): { table: BlindTable; blinder: Blinder; asked: () => number } {
  const blinder = new Blinder(randomBytes(32));
  let asked = 0;
  const table = new BlindTable((word) => {
    asked += 1;
    return blinder.blind(word);
  });
  return { table, blinder, asked: () => asked };
}

describe('BlindTable', () => {
  it("answers the Blinder's HMAC for new and held words, and asks the Blinder once a word", () => {
    const { table, blinder, asked } = countingTable();
    const words = ['lease', 'fencing', 'epoch', 'x9', 'journal'];
    for (const round of [0, 1]) for (const [n, word] of words.entries()) expect(blindOf(table, word, n * 7919), `${word}, round ${round}`).toBe(blinder.blind(word));
    expect(asked()).toBe(words.length);
  });

  it('tells apart words that share a hash', () => {
    const blinder = new Blinder(randomBytes(32));
    const table = new BlindTable((word) => blinder.blind(word));
    // One hash for every word: each lookup probes past the others.
    const words = Array.from({ length: 50 }, (_, n) => `w${n}`);
    for (const word of [...words, ...words.reverse()]) expect(blindOf(table, word, 42)).toBe(blinder.blind(word));
  });

  it('starts over when full and still answers every word', () => {
    const { table, blinder, asked } = countingTable();
    const count = 65_536 + 100;
    for (let n = 0; n < count; n++) blindOf(table, `word${n}`, n * 2654435761);
    expect(asked()).toBe(count);
    // The first words went with the table's start-over; the last are held.
    expect(blindOf(table, 'word0', 0)).toBe(blinder.blind('word0'));
    expect(blindOf(table, `word${count - 1}`, (count - 1) * 2654435761)).toBe(blinder.blind(`word${count - 1}`));
    expect(asked()).toBe(count + 1);
  });

  it('blinds a batch of words (blindEach) as it blinds them one by one, each at its place', () => {
    const { table, blinder, asked } = countingTable();
    const words = ['lease', 'fencing', 'lease', 'epoch', 'w1', 'w2', 'journal', 'fencing'];
    // Words laid end to end, hashed alike for the repeats, two words sharing one hash.
    const bytes = Buffer.from(words.join(''), 'latin1');
    const starts = new Int32Array(words.length);
    const lengths = new Int32Array(words.length);
    const hashes = new Int32Array(words.length);
    let at = 0;
    words.forEach((word, n) => {
      starts[n] = at;
      lengths[n] = word.length;
      hashes[n] = word.startsWith('w') ? 7 : [...word].reduce((hash, c) => Math.imul(hash ^ c.charCodeAt(0), 16_777_619), 0);
      at += word.length;
    });
    const stride = BLINDED_BYTES + 3;
    const out = Buffer.alloc(1 + words.length * stride, 0x2e);
    table.blindEach(bytes, starts, lengths, hashes, words.length, out, 1, stride);
    words.forEach((word, n) => {
      const place = 1 + n * stride;
      expect(out.toString('latin1', place, place + BLINDED_BYTES), word).toBe(blinder.blind(word));
      expect(out.toString('latin1', place + BLINDED_BYTES, place + stride), 'bytes written between the places').toBe('...');
    });
    expect(out[0]).toBe(0x2e);
    expect(asked()).toBe(new Set(words).size);
  });
});
