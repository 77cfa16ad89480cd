/**
 * Strict UTF-8 decoding of request bodies: valid text passes (a BOM is
 * dropped), and the first byte that is not UTF-8 is named with its line and
 * column.
 */
import { describe, expect, it } from 'vitest';
import { decodeUtf8, FormatError } from '../../src/formats/index.js';

const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))));

function failure(input: Uint8Array, format?: string): FormatError {
  try {
    decodeUtf8(input, format);
  } catch (error) {
    expect(error).toBeInstanceOf(FormatError);
    return error as FormatError;
  }
  throw new Error('expected a FormatError');
}

describe('decodeUtf8', () => {
  it('decodes valid UTF-8, multi-byte characters included, and drops a leading BOM', () => {
    expect(decodeUtf8(bytes('café → 🙂'))).toBe('café → 🙂');
    expect(decodeUtf8(bytes([0xef, 0xbb, 0xbf], '{"a":1}'))).toBe('{"a":1}');
    expect(decodeUtf8(new Uint8Array())).toBe('');
  });

  it('names the line and column of the first invalid byte', () => {
    const error = failure(bytes('{\n  "step": "caf', [0xe9], '"\n}'), 'builder-state');
    expect(error.format).toBe('builder-state');
    expect([error.line, error.column, error.field]).toEqual([2, 15, 'byte 16']);
    expect(error.toFieldError()).toEqual({ field: 'line 2, column 15 (byte 16)', message: 'expected UTF-8 text' });
  });

  it('refuses every kind of malformed sequence', () => {
    const cases: Array<[number[], number]> = [
      [[0xff], 0],
      [[0x61, 0xc3], 1],
      [[0xc0, 0xaf], 0],
      [[0xe0, 0x80, 0xaf], 0],
      [[0xed, 0xa0, 0x80], 0],
      [[0xf4, 0x90, 0x80, 0x80], 0],
      [[0xf0, 0x9f, 0x99], 0],
      [[0x61, 0x80], 1],
    ];
    for (const [sequence, offset] of cases) expect(failure(new Uint8Array(sequence)).field).toBe(`byte ${offset}`);
  });
});
