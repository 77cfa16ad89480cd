/**
 * The blinded forms of a tenant's ASCII words by their bytes, for a sealed
 * create's full-text pending entry (`service/repository/entry-text.ts`): a
 * table of typed arrays, open addressing on a hash of the word's bytes, the
 * words and their blinded forms side by side in one arena. The `Blinder`'s
 * map of strings answered each of a create's ~140 words in ~0.25 µs, most
 * of it waiting on memory scattered over 65,536 entries and their strings
 * (`docs/performance.md`, issue 44); here a word is one slot (its hash,
 * where its bytes are and how long they are, side by side) and one run of
 * bytes (the word, then its blinded form): two lines of memory. A word not
 * in the table is blinded by the `Blinder` as ever, then kept. When the
 * table is full it starts again empty, as the `Blinder`'s map does.
 *
 * @module
 */

/** A blinded word: `~` and 16 characters of base64url (`Blinder.blind`). */
export const BLINDED_BYTES = 17;
const WORDS = 65_536;
/** Twice the words: probes stay short. */
const SLOTS = 2 * WORDS;
/** A slot's three numbers: the word's hash, 1 + where its bytes start in the arena (0: free), its length. */
const HASH = 0;
const START = 1;
const LENGTH = 2;
/** Room for the words and their blinded forms at a mean word of 15 bytes; a longer mean fills it first. */
const ARENA_BYTES = WORDS * (15 + BLINDED_BYTES);

export class BlindTable {
  private readonly slots = new Int32Array(3 * SLOTS);
  private readonly arena = Buffer.allocUnsafe(ARENA_BYTES);
  private entries = 0;
  private used = 0;
  /** Each word's first slot's start, read ahead of the lookups ({@link blindEach}). */
  private ahead = new Int32Array(1024);
  /** What the reads ahead summed to: kept, so that the reads are made. */
  private touched = 0;

  /** `blind`: the keyed HMAC of a word (`Blinder.blind`), called for a word not in the table. */
  constructor(private readonly blind: (word: string) => string) {}

  /**
   * Writes the blinded form of the ASCII word `bytes[start, start + length)`
   * at `out[at]` ({@link BLINDED_BYTES} bytes); `hash`: any 32-bit hash of
   * the word's bytes, the same for the same bytes on every call.
   */
  blindInto(bytes: Uint8Array, start: number, length: number, wordHash: number, out: Uint8Array, at: number): void {
    const hash = wordHash | 0;
    const slots = this.slots;
    const mask = SLOTS - 1;
    let slot = hash & mask;
    for (let held = slots[3 * slot + START]!; held !== 0; held = slots[3 * slot + START]!) {
      if (slots[3 * slot + HASH] === hash && slots[3 * slot + LENGTH] === length && sameBytes(this.arena, held - 1, bytes, start, length)) {
        const from = held - 1 + length;
        for (let i = 0; i < BLINDED_BYTES; i++) out[at + i] = this.arena[from + i]!;
        return;
      }
      slot = (slot + 1) & mask;
    }
    const blinded = this.blind(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1', start, start + length));
    if (blinded.length !== BLINDED_BYTES) throw new Error('A blinded word is not of the length the table keeps.');
    Buffer.from(out.buffer, out.byteOffset, out.byteLength).write(blinded, at, 'latin1');
    if (this.entries >= WORDS || this.used + length + BLINDED_BYTES > ARENA_BYTES) {
      this.clear();
      slot = hash & mask;
    }
    this.entries += 1;
    slots[3 * slot + HASH] = hash;
    slots[3 * slot + START] = this.used + 1;
    slots[3 * slot + LENGTH] = length;
    this.arena.set(bytes.subarray(start, start + length), this.used);
    this.arena.write(blinded, this.used + length, 'latin1');
    this.used += length + BLINDED_BYTES;
  }

  /**
   * {@link blindInto} for `count` words, the `n`th at `starts[n]` of `bytes`,
   * `lengths[n]` long, hashed `hashes[n]`, its blinded form written at
   * `out[at + n * stride]`. Each word's first slot, then the arena where that
   * slot points, are read for every word before any word is compared: the
   * reads do not depend on each other, so their cache misses overlap where
   * one word at a time waited for each in turn (the table is 3.6 MB, past
   * a core's cache).
   */
  blindEach(bytes: Uint8Array, starts: Int32Array, lengths: Int32Array, hashes: Int32Array, count: number, out: Uint8Array, at: number, stride: number): void {
    if (this.ahead.length < count) this.ahead = new Int32Array(count);
    const { ahead, slots, arena } = this;
    const mask = SLOTS - 1;
    let touched = 0;
    for (let n = 0; n < count; n++) {
      const held = slots[3 * (hashes[n]! & mask) + START]!;
      ahead[n] = held;
      touched |= held;
    }
    for (let n = 0; n < count; n++) {
      const held = ahead[n]!;
      if (held !== 0) touched ^= arena[held - 1]!;
    }
    this.touched = touched;
    for (let n = 0; n < count; n++) this.blindInto(bytes, starts[n]!, lengths[n]!, hashes[n]!, out, at + n * stride);
  }

  private clear(): void {
    this.slots.fill(0);
    this.entries = 0;
    this.used = 0;
  }
}

/** Whether `length` bytes agree; a loop, as words are short and a call to `Buffer.compare` costs more than comparing them. */
export function sameBytes(a: Uint8Array, aStart: number, b: Uint8Array, bStart: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
}
