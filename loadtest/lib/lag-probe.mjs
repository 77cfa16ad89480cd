/**
 * Loaded into a server by `open-lag.ts` (`--import`): the event loop's delay
 * (`monitorEventLoopDelay`, 1 ms resolution) and every GC pause
 * (`PerformanceObserver`, by kind), and on Linux how long the event loop's
 * thread ran and how long it waited, runnable, for a core (`schedstat`:
 * time on a CPU, time on the run queue), over a window that SIGUSR2 starts;
 * the next SIGUSR2 prints the window as one `LAG {json}` line on stderr and
 * starts the next.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import process from 'node:process';

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let pauses = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) pauses.push({ at: entry.startTime, ms: entry.duration, kind: entry.detail?.kind });
}).observe({ entryTypes: ['gc'] });
let started = performance.now();

/** The event loop's thread (this module runs on it): nanoseconds on a CPU and waiting on the run queue; zeros elsewhere than Linux. */
function schedstat() {
  try {
    const [ran, waited] = readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ').map(Number);
    return { ran, waited };
  } catch {
    return { ran: 0, waited: 0 };
  }
}
let sched = schedstat();

// V8's GC kinds (perf_hooks.constants): 1 minor (scavenge), 2 minor mark-sweep, 4 major (mark-compact), 8 incremental, 16 weak callbacks.
const KINDS = { 1: 'scavenge', 2: 'minorMarkSweep', 4: 'markCompact', 8: 'incremental', 16: 'weakCallbacks' };
const ms = (ns) => Math.round(ns / 1e4) / 100;

process.on('SIGUSR2', () => {
  const gc = {};
  for (const { ms: took, kind } of pauses) {
    const name = KINDS[kind] ?? String(kind);
    const figures = (gc[name] ??= { count: 0, totalMs: 0, maxMs: 0, over5Ms: 0 });
    figures.count += 1;
    figures.totalMs += took;
    figures.maxMs = Math.max(figures.maxMs, took);
    if (took > 5) figures.over5Ms += 1;
  }
  for (const figures of Object.values(gc)) {
    figures.totalMs = Math.round(figures.totalMs * 10) / 10;
    figures.maxMs = Math.round(figures.maxMs * 10) / 10;
  }
  const now = schedstat();
  const loopThread = { ranMs: Math.round((now.ran - sched.ran) / 1e6), waitedForCoreMs: Math.round((now.waited - sched.waited) / 1e6) };
  sched = now;
  const window = { seconds: Math.round(performance.now() - started) / 1000, delay: { p50Ms: ms(delay.percentile(50)), p99Ms: ms(delay.percentile(99)), p999Ms: ms(delay.percentile(99.9)), maxMs: ms(delay.max) }, gc, loopThread };
  process.stderr.write(`LAG ${JSON.stringify(window)}\n`);
  delay.reset();
  pauses = [];
  started = performance.now();
});
