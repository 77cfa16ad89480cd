/**
 * Free space on the file system of a directory, and whether a failed write
 * means that it ran out: the data directory's store and the write queue's
 * journal both ask, and `/readyz` and the `disk_free_bytes` metric report
 * it (`docs/reliability.md`, "A full disk").
 *
 * @module
 */
import { statfsSync } from 'node:fs';

/**
 * Below this many free bytes an I/O error is taken for a full disk: one
 * transaction writes at most 10 MB, so a disk with less than this left is
 * one a write can fill (lmdb-js reports a full tmpfs as EIO, not ENOSPC).
 */
export const LOW_SPACE_BYTES = 64 * 1024 * 1024;

/** Free bytes for an unprivileged writer on the file system of `path`, or undefined when it cannot be read. */
export function freeBytes(path: string): number | undefined {
  try {
    const stats = statfsSync(path);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

/** Whether an error whose text (message and code) is `text`, raised writing under `path`, means its disk is full. */
export function outOfSpace(text: string, free: number | undefined): 'ENOSPC' | 'EDQUOT' | 'EIO' | undefined {
  if (/ENOSPC|No space left/i.test(text)) return 'ENOSPC';
  if (/EDQUOT|quota exceeded/i.test(text)) return 'EDQUOT';
  if (/EIO|Input\/output error/i.test(text) && free !== undefined && free < LOW_SPACE_BYTES) return 'EIO';
  return undefined;
}

/** The text {@link outOfSpace} reads: an error's message and code. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.message} ${String((error as { code?: unknown }).code ?? '')}`;
  return String(error);
}

/** Free and total bytes of the file system of `path`, or undefined when they cannot be read. */
export function diskSpace(path: string): { freeBytes: number; sizeBytes: number } | undefined {
  try {
    const stats = statfsSync(path);
    return { freeBytes: stats.bavail * stats.bsize, sizeBytes: stats.blocks * stats.bsize };
  } catch {
    return undefined;
  }
}

/** Room made on a full disk that counts as room again. */
const ROOM_BYTES = 1024 * 1024;
/**
 * Whether a directory's disk is full, as its writes last found it: full
 * once a write is refused for want of room, and no longer once 1 MiB has
 * been freed since (readiness must see the room, or a load balancer that
 * obeys it never sends the write that would find it) or `landedInARow`
 * writes have landed after the refusal. For LMDB one is not enough: a
 * small commit may fit in pages LMDB already holds while the next larger
 * one is refused; a journal's appends are alike, so one is.
 */
export class FullDisk {
  private fullAt: number | undefined;
  private landed = 0;

  constructor(
    readonly directory: string,
    private readonly landedInARow = 1,
  ) {}

  /** A write to the directory was refused for want of room. */
  refused(): void {
    this.fullAt = freeBytes(this.directory) ?? 0;
    this.landed = 0;
  }

  /** A write to the directory landed. */
  wrote(): void {
    if (this.fullAt !== undefined && ++this.landed >= this.landedInARow) this.fullAt = undefined;
  }

  get full(): boolean {
    if (this.fullAt === undefined) return false;
    if ((freeBytes(this.directory) ?? 0) < this.fullAt + ROOM_BYTES) return true;
    this.fullAt = undefined;
    return false;
  }

  /** What readiness says of the directory while it is full. */
  describe(): { directory: string; freeBytes: number | undefined; full: boolean } {
    return { directory: this.directory, freeBytes: freeBytes(this.directory), full: this.full };
  }
}
