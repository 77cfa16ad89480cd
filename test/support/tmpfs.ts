/**
 * A small tmpfs of a fixed size, mounted for a test and removed after it:
 * a real file system that fills up. Mounting needs root; `tmpfsSkipReason`
 * says why a test cannot run, so it is reported as skipped with the reason.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why a tmpfs cannot be mounted here, or undefined when it can. */
export function tmpfsSkipReason(): string | undefined {
  if (process.platform !== 'linux') return 'a tmpfs mount needs Linux';
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root (CI runs as root)';
  return undefined;
}

export interface Tmpfs {
  dir: string;
  /** Fills the file system with a file until `leaveBytes` are free. */
  fill(leaveBytes: number): void;
  /** Removes the filler: room again. */
  free(): void;
  /** Bytes free now. */
  freeBytes(): number;
  unmount(): void;
}

export function mountTmpfs(sizeMb: number): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'baton-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
  const filler = join(dir, 'filler');
  const freeBytes = (): number => {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  };
  return {
    dir,
    freeBytes,
    fill(leaveBytes) {
      writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes() - leaveBytes)));
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      try {
        execFileSync('umount', [dir]);
      } catch {
        execFileSync('umount', ['-l', dir]);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
