/**
 * Compression of checkpoint records. A compressed value is
 * `0xC1 ‖ 0x00 ‖ method (1 byte) ‖ length (4 bytes, little-endian) ‖ data`:
 * 0xC1 is the byte MessagePack never uses and the mark of a sealed value,
 * and no key id is empty, so `0xC1 0x00` cannot start a sealed or a plain
 * value. Both methods use one preset dictionary of a checkpoint's field
 * names, nothing of anyone's data. Method 1 is raw DEFLATE (RFC 1951,
 * `node:zlib`). Method 2 (store format 11) is one Zstandard frame (RFC
 * 8878, level 1, `zstd-engine.ts`): made in half method 1's time and read
 * back in 15–30 % less, ~6 % smaller on a record of an agent's 4 KB and ~6 %
 * larger on one of 2.5 KB (`docs/performance.md`, twenty-eighth stop). A
 * stored value names its method, so a method never changes, and another
 * would take the next number; every method is read. Method 2 is written in
 * a store of the `task` key layout where the zstd library loads; a store
 * that keeps the `spaces` layout is written as format 8 wrote it, method 1,
 * so that a release of format 8 still reads it. Compression comes before
 * sealing (ciphertext does not compress). A record of 4 KB becomes about
 * 1.2 KB, so several fit in an LMDB page where one took a 4 KB overflow page
 * of its own (`docs/performance.md`, "Records in the page").
 *
 * @module
 */
import { keyLayout } from '../../store/keyspace.js';
import { CompressionWorker } from './compression-worker.js';
import { RawDeflater, RawInflater } from './zlib-engine.js';
import { ZSTD_BINDING, zstdBindingPath, zstdEngine, type ZstdEngine } from './zstd-engine.js';

const MARK = 0xc1;
const COMPRESSED = 0x00;
const DEFLATE_V1 = 1;
const ZSTD_V2 = 2;
/** zstd's level 1: level 3 made records 2 % smaller in 35 % more time and read them back no faster (`docs/performance.md`). */
const ZSTD_LEVEL = 1;
const HEAD_BYTES = 7;
/** Values shorter than this are left as they are: the head would eat most of what is saved. */
const MIN_BYTES = 512;
/**
 * The most each method can expand its data by: DEFLATE never shrinks data
 * below about 1/1032 of its length; zstd's smallest block holds 128 KB in 4
 * bytes (a run of one byte, RFC 8878), so a frame expands at most 32,768
 * times (a record of 100 KB of one character is ~20 bytes). A larger claim
 * is a damaged value, and no buffer is made for it.
 */
const MAX_RATIO: Readonly<Record<number, number>> = { [DEFLATE_V1]: 1032, [ZSTD_V2]: 32_768 };
/**
 * DEFLATE at level 1 with a 4 KB window: on checkpoints of a few KB it
 * compresses as well as level 6 with the default 32 KB window (within 3 %)
 * in half the time, most of which is making the stream, not compressing
 * (measured in `docs/performance.md`).
 */
const WINDOW_BITS = 12;
const LEVEL = 1;

/** The preset dictionary of both methods: a checkpoint's field names in canonical order. */
const DICTIONARY = Buffer.from(
  '{"agentId":"","agentType":"","compliance":{"retentionPolicy":"","legalHold":false},"contextSummary":{"assumptions":[],"constraints":[],' +
    '"externalDependencies":[],"keyDecisions":[{"at":"","by":"","decision":"","rationale":""}]},"createdAt":"2026-","executionState":' +
    '{"blockedItems":[{"blocker":"","description":"","id":""}],"completedItems":[{"at":"2026-","description":"","files":{"created":[],' +
    '"deleted":[],"modified":[]},"id":"step-"}],"currentFocus":"","pendingItems":[{"description":"","id":"step-"}],"phase":"implementing"},' +
    '"extensions":{},"id":"","iteration":1,"labels":{},"metrics":{"contextUtilization":0.,"filesModified":[],"testsStatus":' +
    '{"coveragePercent":,"failed":0,"passed":,"skipped":0},"tokensConsumed":,"toolsInvoked":},"parentId":"","recovery":' +
    '{"continuationPrompt":"","lastSuccessfulState":null,"rollbackInstructions":""},"schemaVersion":"1.0","status":"active","taskId":"",' +
    '"updatedAt":"2026-","version":1}',
  'utf8',
);
const DEFLATE_OPTIONS = { level: LEVEL, windowBits: WINDOW_BITS, dictionary: DICTIONARY };
/** One reused stream per direction (`zlib-engine.ts`): making a zlib stream cost more than compressing a record. */
const DEFLATER = new RawDeflater(DEFLATE_OPTIONS);
const INFLATER = new RawInflater({ windowBits: WINDOW_BITS, dictionary: DICTIONARY });

/** This thread's zstd contexts, made on first use; a reason when the library does not load here. */
let zstd: ZstdEngine | { reason: string } | undefined;
function zstdHere(): ZstdEngine | { reason: string } {
  zstd ??= zstdEngine(DICTIONARY, ZSTD_LEVEL);
  return zstd;
}

/** Why records are written with DEFLATE in a store of the `task` layout (zstd did not load); undefined when they are not. */
export function zstdMissing(): string | undefined {
  const engine = zstdHere();
  return 'reason' in engine ? engine.reason : undefined;
}

/** The threads that compress records of creates made while others are in progress (`compressOffThread`), one a method, started on first use. */
const THREADS = new Map<number, CompressionWorker>();

/** The thread of `method`. */
export function compressionThread(method: number): CompressionWorker {
  let thread = THREADS.get(method);
  if (thread === undefined) {
    // Without the binding the thread fails to start, and its callers compress on their own thread (which then writes DEFLATE).
    const binding = zstdBindingPath() ?? ZSTD_BINDING;
    thread = new CompressionWorker(method === ZSTD_V2 ? { zstd: { binding, dictionary: DICTIONARY, level: ZSTD_LEVEL } } : { zlib: DEFLATE_OPTIONS });
    THREADS.set(method, thread);
  }
  return thread;
}

/** The method records are written with now: zstd, but DEFLATE in a store that keeps the `spaces` layout (format 8) or where zstd does not load. */
export function writtenMethod(): number {
  return keyLayout() !== 'spaces' && !('reason' in zstdHere()) ? ZSTD_V2 : DEFLATE_V1;
}

/** A value that cannot be decompressed: damaged, or written by a method this release lacks. */
export class CompressionError extends Error {}

/** `bytes` compressed (with {@link writtenMethod}'s method, or `method`) when that makes it smaller, else `bytes` as it is. */
export function compress(bytes: Buffer, method = writtenMethod()): Buffer {
  if (bytes.length < MIN_BYTES) return bytes;
  const engine = method === ZSTD_V2 ? zstdHere() : undefined;
  if (engine !== undefined && !('reason' in engine)) return framed(bytes, ZSTD_V2, engine.compress(bytes));
  return framed(bytes, DEFLATE_V1, DEFLATER.deflate(bytes));
}

/**
 * What {@link compress} gives, the work done on the compression thread
 * (`compression-worker.ts`) so that this thread serves other requests
 * meanwhile; on this thread when that one is not available.
 */
export async function compressOffThread(bytes: Buffer): Promise<Buffer> {
  const method = writtenMethod();
  const thread = compressionThread(method);
  if (bytes.length < MIN_BYTES || !thread.usable) return compress(bytes, method);
  let data: Uint8Array;
  try {
    data = await thread.compress(bytes);
  } catch {
    return compress(bytes, method);
  }
  return framed(bytes, method, data);
}

/** `data`, `bytes` compressed by `method`, behind the head; `bytes` itself when that is no smaller. */
function framed(bytes: Buffer, method: number, data: Uint8Array): Buffer {
  if (data.length + HEAD_BYTES >= bytes.length) return bytes;
  const out = Buffer.allocUnsafe(HEAD_BYTES + data.length);
  out[0] = MARK;
  out[1] = COMPRESSED;
  out[2] = method;
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
  const method = bytes[2]!;
  const engine = method === ZSTD_V2 ? zstdHere() : undefined;
  if (engine !== undefined && 'reason' in engine) throw new CompressionError(`The value was compressed with zstd, which cannot be read here: ${engine.reason}.`);
  if (method !== DEFLATE_V1 && engine === undefined) throw new CompressionError(`The value was compressed by method ${method}, which this release does not have.`);
  const length = bytes.readUInt32LE(3);
  const data = bytes.subarray(HEAD_BYTES);
  if (length > data.length * MAX_RATIO[method]! + 16) throw new CompressionError('The compressed value is damaged.');
  try {
    // Output is allocated at the stored length (checked against the ratio above), never at what the data would give.
    return engine === undefined ? INFLATER.inflate(data, length) : engine.decompress(data, length);
  } catch {
    throw new CompressionError('The compressed value is damaged.');
  }
}
