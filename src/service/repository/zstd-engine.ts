/**
 * Zstandard (RFC 8878) for checkpoint records, through zstd-napi's binding
 * to the reference library: one compression context and one decompression
 * context per thread, each with the preset dictionary digested once (a
 * `CDict` at the level, a `DDict`), and the output written into a buffer of
 * the size the caller knows. The package's own `Compressor` and
 * `Decompressor` read the frame's content size, assert on it and copy; the
 * binding's calls do none of that.
 *
 * The binding is a native module built when the package is installed. It
 * is loaded on first use; where it does not load, {@link zstdEngine}
 * answers the reason instead of an engine, and records are written with
 * DEFLATE as before (`compression.ts`).
 *
 * @module
 */
import { createRequire } from 'node:module';

/** The binding's calls used here (`zstd-napi/binding.d.ts`). */
interface Binding {
  CCtx: new () => { compressUsingCDict(dst: Uint8Array, src: Uint8Array, dict: object): number };
  CDict: new (dictionary: Uint8Array, level: number) => object;
  DCtx: new () => { decompressUsingDDict(dst: Uint8Array, src: Uint8Array, dict: object): number };
  DDict: new (dictionary: Uint8Array) => object;
  compressBound(size: number): number;
}

/** The module the compression thread loads too (`compression-worker.ts`), by the path this thread resolved. */
export const ZSTD_BINDING = 'zstd-napi/binding';

let loaded: { binding: Binding; path: string } | { reason: string } | undefined;

function load(): { binding: Binding; path: string } | { reason: string } {
  if (loaded === undefined) {
    try {
      const require = createRequire(import.meta.url);
      const path = require.resolve(ZSTD_BINDING);
      loaded = { binding: require(path) as Binding, path };
    } catch (error) {
      loaded = { reason: `zstd-napi's native module did not load (${error instanceof Error ? error.message.split('\n')[0] : String(error)})` };
    }
  }
  return loaded;
}

/** The binding's file, for a worker thread to load; undefined when it does not load here. */
export function zstdBindingPath(): string | undefined {
  const found = load();
  return 'path' in found ? found.path : undefined;
}

/** A zstd failure: the library's message. */
export class ZstdError extends Error {}

export class ZstdEngine {
  private readonly cctx: InstanceType<Binding['CCtx']>;
  private readonly cdict: object;
  private readonly dctx: InstanceType<Binding['DCtx']>;
  private readonly ddict: object;
  private scratch = Buffer.allocUnsafe(16 * 1024);

  constructor(
    private readonly binding: Binding,
    dictionary: Uint8Array,
    level: number,
  ) {
    this.cctx = new binding.CCtx();
    this.cdict = new binding.CDict(dictionary, level);
    this.dctx = new binding.DCtx();
    this.ddict = new binding.DDict(dictionary);
  }

  /** `bytes` as one zstd frame: a view of this engine's scratch buffer, valid until its next call. */
  compress(bytes: Uint8Array): Buffer {
    const bound = this.binding.compressBound(bytes.length);
    if (this.scratch.length < bound) this.scratch = Buffer.allocUnsafe(bound);
    try {
      return this.scratch.subarray(0, this.cctx.compressUsingCDict(this.scratch, bytes, this.cdict));
    } catch (error) {
      throw new ZstdError(error instanceof Error ? error.message : String(error));
    }
  }

  /** The `length` bytes `data` (one frame) holds; throws when it holds anything else. */
  decompress(data: Uint8Array, length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    let written: number;
    try {
      written = this.dctx.decompressUsingDDict(out, data, this.ddict);
    } catch (error) {
      throw new ZstdError(error instanceof Error ? error.message : String(error));
    }
    if (written !== length) throw new ZstdError(`The frame held ${written} bytes, not ${length}.`);
    return out;
  }
}

/** An engine with `dictionary` at `level`, or why there is none. */
export function zstdEngine(dictionary: Uint8Array, level: number): ZstdEngine | { reason: string } {
  const found = load();
  if ('reason' in found) return found;
  try {
    return new ZstdEngine(found.binding, dictionary, level);
  } catch (error) {
    return { reason: `zstd could not start (${error instanceof Error ? error.message : String(error)})` };
  }
}
