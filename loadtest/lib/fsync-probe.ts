/**
 * The disk's floor: how long one durable write takes on the file system that
 * holds the data directory. Every acknowledged create waits for an fsync
 * (LMDB's commit, grouped with every write of the same event turn), so no
 * create answers sooner than this, whatever the CPU does, and a p99 below the
 * disk's own p99 cannot be had. Writes 4 KiB at a new offset (as a commit
 * writes new pages) and `fdatasync`s, `count` times, one after the other.
 *
 * @module
 */
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { latencyOf, round, type Latency } from './stats.js';

export interface FsyncFigures extends Latency {
  /** Durable writes per second, one at a time. */
  perSec: number;
  count: number;
}

export function fsyncProbe(dir: string, count = 300): FsyncFigures {
  const path = join(dir, 'fsync-probe');
  const fd = openSync(path, 'w');
  const page = Buffer.alloc(4096, 0x5a);
  const samples: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      writeSync(fd, page, 0, page.length, i * page.length);
      fdatasyncSync(fd);
      samples.push(performance.now() - started);
    }
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
  const total = samples.reduce((sum, ms) => sum + ms, 0);
  return { ...latencyOf(samples), perSec: round((1000 * count) / total, 0), count };
}
