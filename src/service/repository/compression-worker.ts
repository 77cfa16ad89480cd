/**
 * Record compression on a worker thread. Compressing a checkpoint record was
 * the largest single piece of native work on a create's event loop (~7 % of
 * it under load, `docs/performance.md`); the service's other thread is
 * mostly idle, since LMDB's writer sleeps between commits. A create that
 * finds others in progress sends its record here before its transaction
 * and waits for the bytes, which one reused context makes there with the
 * same method and dictionary as the event loop's (`compression.ts`): zstd
 * (`zstd-engine.ts`) or raw DEFLATE on one zlib stream (`zlib-engine.ts`),
 * bytes that read back as any other record's do.
 *
 * One thread per method, started on first use and not keeping the process
 * alive (`thread-calls.ts`). If it fails (it cannot start, it exits, it
 * throws), every value waiting on it is refused and the callers compress on
 * their own thread; a failed thread is not started again.
 *
 * @module
 */
import { Worker } from 'node:worker_threads';
import { ThreadCalls, type ThreadAnswer } from './thread-calls.js';
import type { ZlibOptions } from 'node:zlib';

/** The thread's code, as a script (the service runs as TypeScript under the tests and as JavaScript in production). */
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { constants, createDeflateRaw, deflateRawSync } = require('node:zlib');
const { nice, zstd, ...zlibOptions } = workerData;
const options = { ...zlibOptions, dictionary: zlibOptions.dictionary === undefined ? undefined : Buffer.from(zlibOptions.dictionary) };
// Below the event loop (Linux, where a thread has a nice value of its own): see THREAD_NICE.
try {
  require('node:os').setPriority(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()), nice);
} catch {
  // Elsewhere the thread runs at the process's priority.
}
// One stream's native handle, reset after each value, as zlib-engine.ts keeps one on the event loop:
// deflateRawSync makes a stream (and loads the dictionary) for every value, which costs more than a record's compression.
const stream = zstd === undefined ? createDeflateRaw(options) : {};
const handle = stream._handle;
const state = stream._writeState;
const reused = handle !== undefined && typeof handle.writeSync === 'function' && typeof handle.reset === 'function' && state instanceof Uint32Array && state.length === 2;
let failure;
if (reused) handle.onerror = (message) => { failure = message; };
let scratch = Buffer.allocUnsafe(16 * 1024);
// zstd, as zstd-engine.ts does it: one context, the dictionary digested once at the level, output into the scratch buffer.
let zstdCompress;
if (zstd !== undefined) {
  const binding = require(zstd.binding);
  const cctx = new binding.CCtx();
  const cdict = new binding.CDict(Buffer.from(zstd.dictionary), zstd.level);
  zstdCompress = (bytes) => {
    const bound = binding.compressBound(bytes.length);
    if (scratch.length < bound) scratch = Buffer.allocUnsafe(bound);
    return scratch.subarray(0, cctx.compressUsingCDict(scratch, bytes, cdict));
  };
}
function compress(bytes) {
  if (zstdCompress !== undefined) return zstdCompress(bytes);
  if (!reused) return new Uint8Array(deflateRawSync(bytes, options));
  // zlib's bound for stored blocks, and room for the end: deflate never needs more.
  const bound = bytes.length + (bytes.length >> 3) + (bytes.length >> 6) + 64;
  if (scratch.length < bound) scratch = Buffer.allocUnsafe(bound);
  let outLeft;
  let inLeft;
  failure = undefined;
  try {
    handle.writeSync(constants.Z_FINISH, bytes, 0, bytes.length, scratch, 0, scratch.length);
    if (failure !== undefined) throw new Error(failure);
    [outLeft, inLeft] = state;
  } finally {
    failure = undefined;
    handle.reset();
  }
  if (inLeft !== 0 || outLeft === 0) return new Uint8Array(deflateRawSync(bytes, options));
  // A view of the scratch buffer, copied into the answer before the next value is compressed.
  return scratch.subarray(0, scratch.length - outLeft);
}
// A message is a batch: the values end to end, and each one's length; the answer, the same of their compressed bytes.
parentPort.on('message', ({ id, joined, lengths }) => {
  const sizes = new Uint32Array(lengths.length);
  // Each value's bytes are copied out before the next one reuses the scratch buffer; records shrink, so the input's size mostly holds them.
  let data = new Uint8Array(joined.length + 1024);
  let total = 0;
  try {
    let at = 0;
    for (let i = 0; i < lengths.length; i++) {
      const part = compress(joined.subarray(at, at + lengths[i]));
      at += lengths[i];
      if (total + part.length > data.length) {
        const larger = new Uint8Array(2 * (total + part.length));
        larger.set(data.subarray(0, total));
        data = larger;
      }
      data.set(part, total);
      sizes[i] = part.length;
      total += part.length;
    }
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) });
    return;
  }
  parentPort.postMessage({ id, data, sizes }, [data.buffer, sizes.buffer]);
});
`;

/**
 * The thread's nice value. Each record wakes it, and a thread woken on a
 * busy machine is put on a core at once, before the thread that woke it:
 * on two cores, the event loop lost its core for 100 µs to milliseconds on
 * one message in ten (a message cost 25–43 µs on average, against 4–7 µs
 * measured alone). Niced, the thread runs on what the event loop leaves;
 * a create waits for its bytes in any case.
 */
const THREAD_NICE = 19;

interface CompressionAnswer extends ThreadAnswer {
  data?: Uint8Array;
  sizes?: Uint32Array;
}

/** A value waiting for the next batch. */
interface Waiting {
  bytes: Uint8Array;
  resolve(data: Uint8Array): void;
  reject(error: Error): void;
}

/** What the thread compresses with: raw DEFLATE with zlib's options, or zstd (`zstd-engine.ts`) at a level with a dictionary. */
export type CompressionMethod = { zlib: ZlibOptions } | { zstd: { binding: string; dictionary: Uint8Array; level: number } };

/** The method as the thread is given it: dictionaries copied into buffers of their own, which the structured clone copies whole. */
function dataOf(method: CompressionMethod): object {
  if ('zstd' in method) return { zstd: { ...method.zstd, dictionary: new Uint8Array(method.zstd.dictionary) } };
  const { dictionary, ...rest } = method.zlib;
  return dictionary === undefined ? rest : { ...rest, dictionary: new Uint8Array(dictionary as Uint8Array) };
}

export class CompressionWorker {
  private readonly thread: ThreadCalls<CompressionAnswer>;
  /** Values compressed on the thread so far. */
  private done = 0;
  /** Values given since the last batch went: they go together once this turn's I/O is handled. */
  private queued: Waiting[] = [];
  /** Values sent and not yet answered. */
  private sent = 0;

  constructor(method: CompressionMethod) {
    const data = dataOf(method);
    this.thread = new ThreadCalls<CompressionAnswer>(
      'the compression thread',
      () =>
        new Worker(SOURCE, {
          eval: true,
          // The thread holds a value or two at a time: a small heap, not the service's young generation of 3 x 32 MB.
          resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 32 },
          workerData: { ...data, nice: THREAD_NICE },
        }),
    );
  }

  /** Whether values can still be sent (false once the thread failed). */
  get usable(): boolean {
    return this.thread.usable;
  }

  /** How many values the thread has compressed. */
  get compressed(): number {
    return this.done;
  }

  /** How many values wait for their bytes. */
  get pending(): number {
    return this.queued.length + this.sent;
  }

  /**
   * `bytes` compressed on the thread; refused if the thread fails meanwhile.
   * The values given in one turn of the event loop (the creates whose
   * requests arrived together) go in one message and come back in one: a
   * message costs the two threads more than compressing a record.
   */
  compress(bytes: Uint8Array): Promise<Uint8Array> {
    if (!this.thread.usable) return Promise.reject(new Error('The compression thread is not available.'));
    return new Promise<Uint8Array>((resolve, reject) => {
      this.queued.push({ bytes, resolve, reject });
      if (this.queued.length === 1) setImmediate(() => this.send());
    });
  }

  private send(): void {
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    const lengths = new Uint32Array(batch.length);
    let total = 0;
    for (const [i, { bytes }] of batch.entries()) {
      lengths[i] = bytes.length;
      total += bytes.length;
    }
    // One exact buffer, transferred: a value's own buffer may be a slice of a larger pool, which a copy would copy whole.
    const joined = new Uint8Array(total);
    let at = 0;
    for (const { bytes } of batch) {
      joined.set(bytes, at);
      at += bytes.length;
    }
    this.sent += batch.length;
    this.thread.call({ joined, lengths }, [joined.buffer, lengths.buffer]).then(
      ({ data, sizes }) => {
        this.sent -= batch.length;
        if (data === undefined || sizes === undefined || sizes.length !== batch.length) {
          for (const { reject } of batch) reject(new Error('The compression thread answered nothing.'));
          return;
        }
        let from = 0;
        for (const [i, { resolve }] of batch.entries()) {
          resolve(data.subarray(from, from + sizes[i]!));
          from += sizes[i]!;
        }
        this.done += batch.length;
      },
      (error: Error) => {
        this.sent -= batch.length;
        for (const { reject } of batch) reject(error);
      },
    );
  }

  /** Stops the thread (tests); values waiting are refused. */
  close(): Promise<void> {
    const queued = this.queued;
    this.queued = [];
    const stopped = new Error('The compression thread was stopped.');
    for (const { reject } of queued) reject(stopped);
    return this.thread.close();
  }
}
