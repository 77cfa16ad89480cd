/**
 * What a store directory takes on disk: LMDB's data files (the store's and
 * its companion's, `runs/`, where the word runs the merges open are kept:
 * `docs/storage.md`, "Word runs apart"), both as the blocks
 * the file system allocated for it (what `du` prints: LMDB grows its file in
 * steps and leaves freed pages inside it for reuse) and as its apparent size
 * (what `ls -l` prints). The lock file and the write queue are left out: they
 * do not grow with the data.
 *
 * @module
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RUNS_COMPANION } from '../../src/service/indexer/runs-apart.js';

export interface Disk {
  /** Bytes of blocks allocated (st_blocks × 512), as `du` counts. */
  allocatedBytes: number;
  /** The file's length, as `ls -l` counts. */
  apparentBytes: number;
}

const DATA_FILE = 'data.mdb';

export function lmdbDisk(dir: string): Disk {
  const disk = { allocatedBytes: 0, apparentBytes: 0 };
  for (const file of [join(dir, DATA_FILE), join(dir, RUNS_COMPANION, DATA_FILE)]) {
    if (!existsSync(file)) continue;
    const stat = statSync(file);
    disk.allocatedBytes += stat.blocks * 512;
    disk.apparentBytes += stat.size;
  }
  return disk;
}
