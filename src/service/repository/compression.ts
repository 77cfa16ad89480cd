/**
 * Compression of checkpoint records. A compressed value is
 * `0xC1 ‖ 0x00 ‖ dictionary version (1 byte) ‖ LZ4 block with its length
 * prepended (4 bytes, little-endian)`: 0xC1 is the byte MessagePack never
 * uses and the mark of a sealed value, and no key id is empty, so `0xC1 0x00`
 * cannot start a sealed or a plain value. Compression comes before sealing
 * (ciphertext does not compress). A record of a few KB is about half as large
 * and fits inside an LMDB page instead of taking a 4 KB overflow page of its
 * own (`docs/performance.md`, "Records in the page"). The dictionary holds
 * the field names of a checkpoint, nothing of anyone's data; a stored value
 * names the one it was written with, so this one never changes, and another
 * would take the next version number.
 *
 * @module
 */
import { compressSync, uncompressSync } from 'lz4-napi';

const MARK = 0xc1;
const COMPRESSED = 0x00;
const DICTIONARY_V1 = 1;
const HEAD_BYTES = 3;
/** Values shorter than this are left as they are: the head would eat what LZ4 saves. */
const MIN_BYTES = 512;
/** LZ4 never shrinks a block below 1/255 of its length; a larger claim is a damaged value. */
const MAX_RATIO = 255;

const DICTIONARIES: ReadonlyMap<number, Buffer> = new Map([
  [
    DICTIONARY_V1,
    Buffer.from(
      '{"agentId":"","agentType":"","compliance":{"retentionPolicy":"","legalHold":false},"contextSummary":{"assumptions":[],"constraints":[],' +
        '"externalDependencies":[],"keyDecisions":[{"at":"","by":"","decision":"","rationale":""}]},"createdAt":"2026-","executionState":' +
        '{"blockedItems":[{"blocker":"","description":"","id":""}],"completedItems":[{"at":"2026-","description":"","files":{"created":[],' +
        '"deleted":[],"modified":[]},"id":"step-"}],"currentFocus":"","pendingItems":[{"description":"","id":"step-"}],"phase":"implementing"},' +
        '"extensions":{},"id":"","iteration":1,"labels":{},"metrics":{"contextUtilization":0.,"filesModified":[],"testsStatus":' +
        '{"coveragePercent":,"failed":0,"passed":,"skipped":0},"tokensConsumed":,"toolsInvoked":},"parentId":"","recovery":' +
        '{"continuationPrompt":"","lastSuccessfulState":null,"rollbackInstructions":""},"schemaVersion":"1.0","status":"active","taskId":"",' +
        '"updatedAt":"2026-","version":1}',
      'utf8',
    ),
  ],
]);
const WRITE_DICTIONARY = DICTIONARIES.get(DICTIONARY_V1)!;

/** A value that cannot be decompressed: damaged, or written with a dictionary this release lacks. */
export class CompressionError extends Error {}

/** `bytes` compressed when that makes it smaller, else `bytes` as it is. */
export function compress(bytes: Buffer): Buffer {
  if (bytes.length < MIN_BYTES) return bytes;
  const block = compressSync(bytes, WRITE_DICTIONARY);
  if (block.length + HEAD_BYTES >= bytes.length) return bytes;
  const out = Buffer.allocUnsafe(HEAD_BYTES + block.length);
  out[0] = MARK;
  out[1] = COMPRESSED;
  out[2] = DICTIONARY_V1;
  block.copy(out, HEAD_BYTES);
  return out;
}

export function isCompressed(bytes: Uint8Array): boolean {
  return bytes.length >= HEAD_BYTES && bytes[0] === MARK && bytes[1] === COMPRESSED;
}

/** The bytes `compress` was given; a value that was never compressed comes back as it is. */
export function decompress(bytes: Buffer): Buffer {
  if (!isCompressed(bytes)) return bytes;
  const dictionary = DICTIONARIES.get(bytes[2]!);
  if (dictionary === undefined) throw new CompressionError(`The value was compressed with dictionary ${bytes[2]!}, which this release does not have.`);
  const block = bytes.subarray(HEAD_BYTES);
  if (block.length < 4 || block.readUInt32LE(0) > (block.length - 4) * MAX_RATIO + 16) throw new CompressionError('The compressed value is damaged.');
  try {
    return uncompressSync(block, dictionary);
  } catch {
    throw new CompressionError('The compressed value is damaged.');
  }
}
