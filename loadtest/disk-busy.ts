/**
 * Another process's writes beside Baton: writes `BENCH_BUSY_MB` MB (default
 * 8) and flushes them every `BENCH_BUSY_MS` ms (default 100) for
 * `BENCH_SECONDS_BUSY` seconds (default 600), as a build or a backup on the
 * same disk would, so that an open loop can be measured on a disk whose
 * flushes wait behind other writes (on the project's VM every `fdatasync`
 * then takes ~4 ms instead of ~0.15: `docs/performance.md`, issue 44,
 * nineteenth stop). Run it beside a benchmark, at a low priority:
 *
 *   nice -n 19 npx tsx loadtest/disk-busy.ts & npx tsx loadtest/open-lag.ts; kill %1
 *
 * It prints its own flushes' p50 and p99 when it stops (SIGTERM or time).
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envNumber } from './lib/env.js';

const MB = envNumber('BENCH_BUSY_MB', 8, false);
const EVERY_MS = envNumber('BENCH_BUSY_MS', 100, false);
const SECONDS = envNumber('BENCH_SECONDS_BUSY', 600, false);
/** The file's slots: a few writes' worth, rewritten in turn. */
const SLOTS = 16;

const dir = mkdtempSync(join(process.env.BENCH_BUSY_DIR ?? tmpdir(), 'baton-disk-busy-'));
const fd = openSync(join(dir, 'busy.bin'), 'w');
const chunk = randomBytes(Math.round(MB * 1024 * 1024));
const flushes: number[] = [];
let slot = 0;

const timer = setInterval(() => {
  writeSync(fd, chunk, 0, chunk.length, (slot++ % SLOTS) * chunk.length);
  const start = performance.now();
  fdatasyncSync(fd);
  flushes.push(performance.now() - start);
}, EVERY_MS);

function stop(): void {
  clearInterval(timer);
  closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
  const sorted = flushes.sort((a, b) => a - b);
  const at = (q: number): string => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1);
  console.log(`disk-busy: ${flushes.length} writes of ${MB} MB flushed; flush p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`);
  process.exit(0);
}

setTimeout(stop, SECONDS * 1000);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
