/**
 * Raw DEFLATE on one reused zlib stream per direction. `deflateRawSync` and
 * `inflateRawSync` build a zlib stream for every call (a Transform stream,
 * its native context, ~200 KB of window and hash tables, and the preset
 * dictionary loaded again), and on a 2 KB record that costs more than the
 * compression: a GET spent 17 % of its event loop in `inflateRawSync`, most
 * of it making and dropping the stream (`docs/performance.md`). Here one
 * stream's native handle is kept and reset after each value, which is what
 * the sync functions do once: `writeSync` with Z_FINISH, then `reset`, which
 * loads the dictionary again. What it writes is raw DEFLATE like theirs,
 * read back by either, though not always the same bytes (`deflate`). The
 * handle is the stream's own (`_handle`, in Node since v0.x); where a Node
 * release lacks it, the sync functions are used instead.
 *
 * Calls are synchronous on the calling thread, so one handle per direction
 * serves every caller of this thread.
 *
 * @module
 */
import { constants, createDeflateRaw, createInflateRaw, deflateRawSync, inflateRawSync, type ZlibOptions } from 'node:zlib';

/** What a zlib stream keeps of its native context: the calls `processChunkSync` makes. */
interface NativeHandle {
  writeSync(flush: number, input: Uint8Array, inOffset: number, inLength: number, output: Uint8Array, outOffset: number, outLength: number): void;
  reset(): void;
  onerror: (message: string, errno: number) => void;
}

/** The stream's native handle and the two counters `writeSync` leaves behind (output left, input left). */
interface Native {
  handle: NativeHandle;
  state: Uint32Array;
  /** Kept so that the stream, and with it the handle, lives as long as the engine. */
  stream: object;
}

function nativeOf(stream: object): Native | undefined {
  const { _handle: handle, _writeState: state } = stream as { _handle?: Partial<NativeHandle>; _writeState?: unknown };
  if (handle === undefined || typeof handle.writeSync !== 'function' || typeof handle.reset !== 'function') return undefined;
  if (!(state instanceof Uint32Array) || state.length !== 2) return undefined;
  return { handle: handle as NativeHandle, state, stream };
}

/** A zlib failure on a reused handle: the message zlib gave. */
export class ZlibError extends Error {}

abstract class Engine {
  private readonly native: Native | undefined;
  private failure: string | undefined;

  protected constructor(stream: object) {
    this.native = nativeOf(stream);
    if (this.native !== undefined) {
      // The stream's own handler would destroy it (and close the handle) on the first damaged value.
      this.native.handle.onerror = (message) => {
        this.failure = message;
      };
    }
  }

  /** Whether this Node release lets the stream's handle be reused (else each call makes a stream, as zlib's sync functions do). */
  get reused(): boolean {
    return this.native !== undefined;
  }

  /**
   * Runs `input` through the handle into `output` with Z_FINISH and resets
   * it; answers how much of `output` was filled, and whether all of the
   * input was taken and the stream ended within `output`.
   */
  protected run(input: Uint8Array, output: Uint8Array): { written: number; finished: boolean } {
    const { handle, state } = this.native!;
    this.failure = undefined;
    try {
      handle.writeSync(constants.Z_FINISH, input, 0, input.length, output, 0, output.length);
      if (this.failure !== undefined) throw new ZlibError(this.failure);
      const [outLeft, inLeft] = state as unknown as [number, number];
      return { written: output.length - outLeft, finished: inLeft === 0 && outLeft > 0 };
    } finally {
      this.failure = undefined;
      handle.reset();
    }
  }
}

/** Raw DEFLATE with fixed options, on one reused stream. */
export class RawDeflater extends Engine {
  private readonly options: ZlibOptions;
  private scratch = Buffer.allocUnsafe(16 * 1024);

  constructor(options: ZlibOptions) {
    super(createDeflateRaw(options));
    this.options = options;
  }

  /**
   * `bytes` deflated: raw DEFLATE that any inflater reads back with the same
   * dictionary. Not always the bytes a fresh stream gives: zlib's reset
   * clears the hash heads but not the chains behind them, so a reused
   * stream may find a match (a real one, checked byte by byte) that a fresh
   * stream would not.
   */
  deflate(bytes: Uint8Array): Buffer {
    if (!this.reused) return deflateRawSync(bytes, this.options);
    // zlib's bound for stored blocks, and room for the end: deflate never needs more.
    const bound = bytes.length + (bytes.length >> 3) + (bytes.length >> 6) + 64;
    if (this.scratch.length < bound) this.scratch = Buffer.allocUnsafe(bound);
    const { written, finished } = this.run(bytes, this.scratch);
    if (!finished) return deflateRawSync(bytes, this.options);
    return Buffer.from(this.scratch.subarray(0, written));
  }
}

/** Raw INFLATE with fixed options, on one reused stream. */
export class RawInflater extends Engine {
  private readonly options: ZlibOptions;

  constructor(options: ZlibOptions) {
    super(createInflateRaw(options));
    this.options = options;
  }

  /**
   * `data` inflated, which must give exactly `length` bytes; anything else
   * (damaged data, a stream that ends early or runs on) throws.
   */
  inflate(data: Uint8Array, length: number): Buffer {
    if (!this.reused) {
      const out = inflateRawSync(data, { ...this.options, maxOutputLength: Math.max(length, 1) });
      if (out.length !== length) throw new ZlibError('The inflated length differs from the one stored.');
      return out;
    }
    // One byte more than claimed: a stream that would run on past `length` fills it and is refused.
    const out = Buffer.allocUnsafe(length + 1);
    const { written, finished } = this.run(data, out);
    if (!finished || written !== length) throw new ZlibError('The inflated length differs from the one stored.');
    return out.subarray(0, length);
  }
}
