/**
 * What a store directory takes on disk: LMDB's data file, both as the blocks
 * the file system allocated for it (what `du` prints: LMDB grows its file in
 * steps and leaves freed pages inside it for reuse) and as its apparent size
 * (what `ls -l` prints). The lock file and the write queue are left out: they
 * do not grow with the data.
 *
 * @module
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';

export interface Disk {
  /** Bytes of blocks allocated (st_blocks × 512), as `du` counts. */
  allocatedBytes: number;
  /** The file's length, as `ls -l` counts. */
  apparentBytes: number;
}

const DATA_FILE = 'data.mdb';

export function lmdbDisk(dir: string): Disk {
  const stat = statSync(join(dir, DATA_FILE));
  return { allocatedBytes: stat.blocks * 512, apparentBytes: stat.size };
}
