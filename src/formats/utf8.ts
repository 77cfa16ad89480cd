/**
 * Strict UTF-8 decoding of a request body. The HTTP layer receives bytes; a
 * document that is not valid UTF-8 is refused with the line and column of the
 * first bad byte instead of being read with replacement characters.
 *
 * @module
 */
import { FormatError, positionOf } from './errors.js';

const strict = new TextDecoder('utf-8', { fatal: true });

/** The text of `bytes`, or a FormatError naming the first byte that is not UTF-8. A leading BOM is dropped. */
export function decodeUtf8(bytes: Uint8Array, format = 'utf-8'): string {
  try {
    return strict.decode(bytes);
  } catch (cause) {
    const offset = firstInvalidByte(bytes);
    const { line, column } = positionOf(strict.decode(bytes.subarray(0, offset)), Number.MAX_SAFE_INTEGER);
    throw new FormatError({ format, field: `byte ${offset}`, line, column, expected: 'UTF-8 text' }, { cause });
  }
}

/** Index of the first byte that starts or continues an invalid UTF-8 sequence (RFC 3629). */
function firstInvalidByte(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i += 1;
      continue;
    }
    let length: number;
    let min = 0x80;
    let max = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) min = 0xa0;
      if (b === 0xed) max = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) min = 0x90;
      if (b === 0xf4) max = 0x8f;
    } else return i;
    for (let k = 1; k < length; k++) {
      const c = bytes[i + k];
      const low = k === 1 ? min : 0x80;
      const high = k === 1 ? max : 0xbf;
      if (c === undefined || c < low || c > high) return i;
    }
    i += length;
  }
  return bytes.length;
}
