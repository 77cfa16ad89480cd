/**
 * A new checkpoint's full-text pending entry (`pending-terms.ts`) written
 * as bytes in one reused buffer: the position of the task's checkpoint
 * before it, a line a word, then a line an index entry it leaves to the
 * merge, framed as the MessagePack string the list's codec writes for that
 * text. Made as strings (a string a word, a set of them, the text
 * concatenated, then encoded), the entry was the most a create allocated in
 * any one place of Baton's own, ~35 KB of its ~190 KB (`docs/performance.md`,
 * issue 44).
 *
 * For text that is all ASCII, {@link EntryText.write} finds the words as
 * `termsOf` (`domain/terms.ts`) does, in the same order, lower-cased into
 * the buffer as they are read, and keeps the first of each by a hash of its
 * bytes; a word is never a string. With encryption at rest the entry holds
 * each word's keyed HMAC instead, found by its bytes in the tenant's
 * `BlindTable` (`crypto/blind-table.ts`). Anything else (a character beyond
 * ASCII, a word long enough to be indexed by its hash, text that is not
 * well-formed UTF-16) is left to the strings' way: `write` answers
 * undefined, having written nothing anyone sees. A property test holds the
 * bytes equal to the strings' way's.
 *
 * One writer is shared by the process: a write runs from start to end with
 * no await, and its answer is a copy.
 *
 * @module
 */
import { BLINDED_BYTES, sameBytes, type BlindTable } from '../../crypto/blind-table.js';
import type { Checkpoint } from '../../domain/checkpoint.js';
import { forEachSearchedText, MAX_TERMS, MIN_TERM_LENGTH, STOP_WORDS } from '../../domain/terms.js';
import { MAX_TERM_BYTES, type DeferredEntry, type IndexPosition } from './indexes.js';
import { indexLine } from './pending-terms.js';

/** Room before the text for the longest MessagePack string head (str 32: a byte and four of length). */
const HEAD_ROOM = 5;
const NEWLINE = 0x0a;
/** Slots of the table of words seen: a power of two, at least four times the words it holds. */
const SLOTS = 4096;
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

const PERCENT = 0x25;
const SPACE = 0x20;
const FILE_PREFIX = Buffer.from('file:', 'latin1');

/** A checkpoint's file paths, each once (`filePaths`), and the spelling of a path's word the bytes' way does not take (`fileWord`, then `TermRows.word`). */
export interface FileWords {
  paths: ReadonlySet<string>;
  word: (path: string) => string;
}

const hashOf = (word: Uint8Array): number => word.reduce((hash, byte) => Math.imul(hash ^ byte, FNV_PRIME), FNV_OFFSET);
const STOP = [...STOP_WORDS].map((word) => Buffer.from(word, 'latin1'));
const LONGEST_STOP = Math.max(...STOP.map((word) => word.length));

/** A text written as UTF-8 after room for its MessagePack head, growing as it needs. */
class TextBytes {
  bytes = Buffer.allocUnsafe(16_384);
  end = HEAD_ROOM;

  reset(): void {
    this.end = HEAD_ROOM;
  }

  /** Room for `more` bytes after the end. */
  reserve(more: number): void {
    if (this.end + more + 1 <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.bytes.length, this.end + more + 1));
    this.bytes.copy(grown, 0, 0, this.end);
    this.bytes = grown;
  }

  /** A line break then `text`; false when `text` is not well-formed UTF-16 (its bytes would differ from the codec's). */
  line(text: string): boolean {
    this.reserve(1);
    this.bytes[this.end++] = NEWLINE;
    return this.text(text);
  }

  text(text: string): boolean {
    if (!text.isWellFormed()) return false;
    this.reserve(3 * text.length);
    this.end += this.bytes.write(text, this.end, 'utf8');
    return true;
  }

  /** The text framed as a MessagePack string (fixstr, str 8, 16 or 32, the shortest that holds it), copied out. */
  value(): Buffer {
    const bytes = this.bytes;
    const length = this.end - HEAD_ROOM;
    let start: number;
    if (length < 0x20) {
      start = HEAD_ROOM - 1;
      bytes[start] = 0xa0 | length;
    } else if (length < 0x100) {
      start = HEAD_ROOM - 2;
      bytes[start] = 0xd9;
      bytes[start + 1] = length;
    } else if (length < 0x10000) {
      start = HEAD_ROOM - 3;
      bytes[start] = 0xda;
      bytes.writeUInt16BE(length, start + 1);
    } else {
      start = HEAD_ROOM - 5;
      bytes[start] = 0xdb;
      bytes.writeUInt32BE(length, start + 1);
    }
    return Buffer.from(bytes.subarray(start, this.end));
  }
}

export class EntryText {
  /** The head and the words as read, each once: the entry itself when the words are written plain. */
  private readonly plain = new TextBytes();
  /** The entry with each word's blinded form, when encryption at rest is on. */
  private readonly blinded = new TextBytes();
  /** The words kept so far, by the hash of their bytes: 0 free, else 1 + the word's number. */
  private readonly slots = new Int32Array(SLOTS);
  private readonly starts = new Int32Array(MAX_TERMS);
  private readonly lengths = new Int32Array(MAX_TERMS);
  private readonly hashes = new Int32Array(MAX_TERMS);
  private words = 0;
  /** Stop words by hash, as the table of words seen holds words, their bytes in {@link STOP}. */
  private readonly stopSlots = new Int32Array(256);
  /** Where a file word is spelled before it is blinded or copied: the longest this way takes. */
  private readonly fileWord = Buffer.allocUnsafe(MAX_TERM_BYTES);

  constructor() {
    STOP.forEach((word, n) => {
      let slot = hashOf(word) & (this.stopSlots.length - 1);
      while (this.stopSlots[slot] !== 0) slot = (slot + 1) & (this.stopSlots.length - 1);
      this.stopSlots[slot] = n + 1;
    });
  }

  /**
   * The pending entry of `checkpoint`, after `previous`, as the list stores
   * it: its words, then a word for each of `files.paths` (`fileWord`'s
   * spelling, blinded when encryption is on), then a line for each of
   * `index`. `blind`: the tenant's table of blinded words when encryption at
   * rest is on. Undefined when any of it is not for this way (above): the
   * caller writes it the strings' way.
   */
  write(checkpoint: Checkpoint, previous: IndexPosition | undefined, files: FileWords, index: readonly DeferredEntry[], blind?: BlindTable): Buffer | undefined {
    const plain = this.plain;
    plain.reset();
    if (previous !== undefined && !plain.text(`${previous.createdAt} ${previous.checkpointId}`)) return undefined;
    const head = plain.end;
    if (!this.asciiTerms(checkpoint)) return undefined;
    const out = blind === undefined ? plain : this.spell(head, blind);
    for (const path of files.paths) if (!this.fileLine(out, path, blind) && !out.line(files.word(path))) return undefined;
    for (const entry of index) if (!out.line(indexLine(entry))) return undefined;
    return out.value();
  }

  /**
   * A line for the file word of `path` as `fileWord` spells it (`file:`, the
   * path with `%`, space and line feed escaped), blinded by `blind` when
   * given, written from the path's characters; false, having written
   * nothing, for a path beyond ASCII or one whose word would be indexed by
   * its hash (the caller spells that one as a string). A second reading of
   * `fileWord`'s rule: a change to it is made in both (the property test
   * holds them equal).
   */
  private fileLine(out: TextBytes, path: string, blind: BlindTable | undefined): boolean {
    let length = FILE_PREFIX.length;
    for (let i = 0; i < path.length; i++) {
      const code = path.charCodeAt(i);
      if (code >= 0x80) return false;
      length += code === PERCENT || code === SPACE || code === NEWLINE ? 3 : 1;
    }
    // `indexTerm` keeps the path and its word as they are only up to this length (an ASCII character is a byte).
    if (length > MAX_TERM_BYTES) return false;
    const word = this.fileWord;
    FILE_PREFIX.copy(word, 0);
    let at = FILE_PREFIX.length;
    for (let i = 0; i < path.length; i++) {
      const code = path.charCodeAt(i);
      if (code === PERCENT || code === SPACE || code === NEWLINE) {
        word[at++] = PERCENT;
        const hex = code === PERCENT ? '25' : code === SPACE ? '20' : '0A';
        word[at++] = hex.charCodeAt(0);
        word[at++] = hex.charCodeAt(1);
      } else word[at++] = code;
    }
    if (blind === undefined) {
      out.reserve(1 + length);
      out.bytes[out.end] = NEWLINE;
      word.copy(out.bytes, out.end + 1, 0, length);
      out.end += 1 + length;
    } else {
      out.reserve(1 + BLINDED_BYTES);
      out.bytes[out.end] = NEWLINE;
      let hash = FNV_OFFSET;
      for (let i = 0; i < length; i++) hash = Math.imul(hash ^ word[i]!, FNV_PRIME);
      blind.blindInto(word, 0, length, hash, out.bytes, out.end + 1);
      out.end += 1 + BLINDED_BYTES;
    }
    return true;
  }

  /** The head, then each word kept in its blinded form. */
  private spell(head: number, blind: BlindTable): TextBytes {
    const out = this.blinded;
    out.reset();
    out.reserve(head + this.words * (1 + BLINDED_BYTES));
    this.plain.bytes.copy(out.bytes, out.end, out.end, head);
    out.end = head;
    for (let n = 0; n < this.words; n++) out.bytes[out.end + n * (1 + BLINDED_BYTES)] = NEWLINE;
    blind.blindEach(this.plain.bytes, this.starts, this.lengths, this.hashes, this.words, out.bytes, out.end + 1, 1 + BLINDED_BYTES);
    out.end += this.words * (1 + BLINDED_BYTES);
    return out;
  }

  /** Adds the words of the checkpoint's searched text; false when one of them is not for this way. */
  private asciiTerms(checkpoint: Checkpoint): boolean {
    this.slots.fill(0);
    this.words = 0;
    let ascii = true;
    forEachSearchedText(checkpoint, (text) => {
      if (this.words >= MAX_TERMS) return false;
      const more = this.scan(text);
      if (more === undefined) ascii = false;
      return more === true;
    });
    return ascii;
  }

  /**
   * Adds the words of one text as `addAsciiTerms` finds them: runs of ASCII
   * letters and digits, lower-cased, at least {@link MIN_TERM_LENGTH} long,
   * no stop word, each once. False once {@link MAX_TERMS} are kept;
   * undefined at a character beyond ASCII or a word too long to keep.
   */
  private scan(text: string): boolean | undefined {
    const length = text.length;
    const plain = this.plain;
    plain.reserve(length + 1);
    const bytes = plain.bytes;
    // A word is written after its line break's place, and kept by moving the end past it.
    let at = plain.end + 1;
    let start = -1;
    let hash = FNV_OFFSET;
    for (let i = 0; i <= length; i++) {
      const code = i < length ? text.charCodeAt(i) : 0x20;
      if (code >= 0x80) return undefined;
      let lower: number;
      if ((code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39)) lower = code;
      else if (code >= 0x41 && code <= 0x5a) lower = code + 0x20;
      else {
        if (start < 0) continue;
        if (this.keep(start, at - start, hash) === undefined) return undefined;
        if (this.words >= MAX_TERMS) return false;
        at = plain.end + 1;
        start = -1;
        continue;
      }
      if (start < 0) {
        start = at;
        hash = FNV_OFFSET;
      }
      bytes[at++] = lower;
      hash = Math.imul(hash ^ lower, FNV_PRIME);
    }
    return true;
  }

  /** Keeps the word at `start` unless it is short, a stop word or seen; undefined when it is too long for this way. */
  private keep(start: number, length: number, hash: number): boolean | undefined {
    if (length < MIN_TERM_LENGTH) return false;
    // Longer, `indexTerm` indexes it by its SHA-256: the strings' way (an ASCII word's bytes are its characters).
    if (length > MAX_TERM_BYTES) return undefined;
    const bytes = this.plain.bytes;
    if (length <= LONGEST_STOP && this.isStopWord(bytes, start, length, hash)) return false;
    const mask = SLOTS - 1;
    let slot = hash & mask;
    for (let held = this.slots[slot]!; held !== 0; held = this.slots[slot]!) {
      const n = held - 1;
      if (this.hashes[n] === hash && this.lengths[n] === length && sameBytes(bytes, this.starts[n]!, bytes, start, length)) return false;
      slot = (slot + 1) & mask;
    }
    const n = this.words++;
    this.slots[slot] = n + 1;
    this.starts[n] = start;
    this.lengths[n] = length;
    this.hashes[n] = hash;
    bytes[start - 1] = NEWLINE;
    this.plain.end = start + length;
    return true;
  }

  private isStopWord(bytes: Buffer, start: number, length: number, hash: number): boolean {
    const mask = this.stopSlots.length - 1;
    for (let slot = hash & mask, held = this.stopSlots[slot]!; held !== 0; slot = (slot + 1) & mask, held = this.stopSlots[slot]!) {
      const word = STOP[held - 1]!;
      if (word.length === length && sameBytes(word, 0, bytes, start, length)) return true;
    }
    return false;
  }
}

/** The process's writer (creates' bodies run one at a time, and `write` does not yield). */
export const ENTRY_TEXT = new EntryText();
