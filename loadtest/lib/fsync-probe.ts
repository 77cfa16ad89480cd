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

export interface QuietDisk {
  /** Seconds waited for the disk to answer as it did at the start. */
  waitedSeconds: number;
  /** The first probe's p99, and the last one's. */
  firstP99Ms: number;
  lastP99Ms: number;
  /** False when `maxSeconds` ran out first. */
  quiet: boolean;
}

/**
 * Waits until a probe's fsync p99 is back within `factor` of `baselineP99Ms`
 * (the disk before any load), probing every second up to `maxSeconds`. On
 * this VM the disk stays slow for a while after a few gigabytes of fsynced
 * writes (servers since stopped): its fsync p99 was 2.6-5.5 ms against
 * 0.2-0.5 ms at rest. A latency scenario run then measures those writes,
 * not the server; each one waits here first, and says how long.
 */
export async function waitForQuietDisk(dir: string, baselineP99Ms: number, maxSeconds = 60, factor = 2): Promise<QuietDisk> {
  const started = performance.now();
  const bound = Math.max(baselineP99Ms * factor, 0.5);
  let probe = fsyncProbe(dir, 200);
  const firstP99Ms = probe.p99Ms;
  while (probe.p99Ms > bound && performance.now() - started < maxSeconds * 1000) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    probe = fsyncProbe(dir, 200);
  }
  return { waitedSeconds: round((performance.now() - started) / 1000, 1), firstP99Ms, lastP99Ms: probe.p99Ms, quiet: probe.p99Ms <= bound };
}
