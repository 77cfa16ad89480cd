/**
 * Compression of checkpoint records. A compressed value is
 * `0xC1 ‖ 0x00 ‖ method (1 byte) ‖ length (4 bytes, little-endian) ‖ data`:
 * 0xC1 is the byte MessagePack never uses and the mark of a sealed value,
 * and no key id is empty, so `0xC1 0x00` cannot start a sealed or a plain
 * value. Method 1 is raw DEFLATE (RFC 1951, `node:zlib`) with a preset
 * dictionary of a checkpoint's field names, nothing of anyone's data; a
 * stored value names its method, so this one never changes, and another
 * would take the next number. Compression comes before sealing (ciphertext
 * does not compress). A record of 2.4 KB becomes about 0.9 KB, so four fit in
 * an LMDB page where one took a 4 KB overflow page of its own
 * (`docs/performance.md`, "Records in the page").
 *
 * @module
 */
import { DeflateWorker } from './deflate-worker.js';
import { RawDeflater, RawInflater } from './zlib-engine.js';

const MARK = 0xc1;
const COMPRESSED = 0x00;
const DEFLATE_V1 = 1;
const HEAD_BYTES = 7;
/** Values shorter than this are left as they are: the head would eat most of what is saved. */
const MIN_BYTES = 512;
/** DEFLATE never shrinks data below about 1/1032 of its length; a larger claim is a damaged value. */
const MAX_RATIO = 1032;
/**
 * Level 1 with a 4 KB window: on checkpoints of a few KB it compresses as
 * well as level 6 with the default 32 KB window (within 3 %) in half the time,
 * most of which is making the stream, not compressing (measured in
 * `docs/performance.md`).
 */
const WINDOW_BITS = 12;
const LEVEL = 1;

const DICTIONARIES: ReadonlyMap<number, Buffer> = new Map([
  [
    DEFLATE_V1,
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
const DEFLATE_OPTIONS = { level: LEVEL, windowBits: WINDOW_BITS, dictionary: DICTIONARIES.get(DEFLATE_V1)! };
/** One reused stream per direction (`zlib-engine.ts`): making a zlib stream cost more than compressing a record. */
const DEFLATER = new RawDeflater(DEFLATE_OPTIONS);
/** The thread that compresses records of creates made while others are in progress (`compressOffThread`). */
export const DEFLATE_THREAD = new DeflateWorker(DEFLATE_OPTIONS);
const INFLATERS: ReadonlyMap<number, RawInflater> = new Map(
  [...DICTIONARIES].map(([method, dictionary]) => [method, new RawInflater({ windowBits: WINDOW_BITS, dictionary })]),
);

/** A value that cannot be decompressed: damaged, or written by a method this release lacks. */
export class CompressionError extends Error {}

/** `bytes` compressed when that makes it smaller, else `bytes` as it is. */
export function compress(bytes: Buffer): Buffer {
  if (bytes.length < MIN_BYTES) return bytes;
  return framed(bytes, DEFLATER.deflate(bytes));
}

/**
 * What {@link compress} gives, the DEFLATE work done on the compression
 * thread (`deflate-worker.ts`) so that this thread serves other requests
 * meanwhile; on this thread when that one is not available.
 */
export async function compressOffThread(bytes: Buffer): Promise<Buffer> {
  if (bytes.length < MIN_BYTES || !DEFLATE_THREAD.usable) return compress(bytes);
  let data: Uint8Array;
  try {
    data = await DEFLATE_THREAD.deflate(bytes);
  } catch {
    return compress(bytes);
  }
  return framed(bytes, data);
}

/** `data`, the DEFLATE of `bytes`, behind the head; `bytes` itself when that is no smaller. */
function framed(bytes: Buffer, data: Uint8Array): Buffer {
  if (data.length + HEAD_BYTES >= bytes.length) return bytes;
  const out = Buffer.allocUnsafe(HEAD_BYTES + data.length);
  out[0] = MARK;
  out[1] = COMPRESSED;
  out[2] = DEFLATE_V1;
  out.writeUInt32LE(bytes.length, 3);
  out.set(data, HEAD_BYTES);
  return out;
}

/** Whether `bytes` starts as a compressed value does (a cut-short one included, which then reads as damaged). */
export function isCompressed(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === MARK && bytes[1] === COMPRESSED;
}

/** The bytes `compress` was given; a value that was never compressed comes back as it is. */
export function decompress(bytes: Buffer): Buffer {
  if (!isCompressed(bytes)) return bytes;
  if (bytes.length < HEAD_BYTES) throw new CompressionError('The compressed value is damaged.');
  const inflater = INFLATERS.get(bytes[2]!);
  if (inflater === undefined) throw new CompressionError(`The value was compressed by method ${bytes[2]!}, which this release does not have.`);
  const length = bytes.readUInt32LE(3);
  const data = bytes.subarray(HEAD_BYTES);
  if (length > data.length * MAX_RATIO + 16) throw new CompressionError('The compressed value is damaged.');
  try {
    // Output is allocated at the stored length (checked against the ratio above), never at what the data would give.
    return inflater.inflate(data, length);
  } catch {
    throw new CompressionError('The compressed value is damaged.');
  }
}
