/**
 * Readings of another process from /proc (Linux only): the TCP ports it
 * listens on, its memory, and the CPU it has used. The HTTP benchmark reads
 * its server children this way because they run in other processes, where
 * `process.memoryUsage()` and `process.cpuUsage()` cannot see.
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { round } from './stats.js';

/** The TCP ports `pid` listens on, from /proc (Linux): its socket inodes matched against /proc/net/tcp{,6}. */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // The descriptor closed meanwhile.
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:tm retrnsmt uid timeout inode; st 0A = LISTEN
      if (fields.length < 10 || fields[3] !== '0A' || !inodes.has(fields[9]!)) continue;
      ports.push(parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

export interface Memory {
  rssMB: number;
  peakRssMB: number;
  /** Heap and other private memory. */
  anonMB: number;
  /** File-backed pages: LMDB's memory map, the node binary and libraries. */
  fileMB: number;
}

/** VmRSS, VmHWM (peak RSS), RssAnon and RssFile of a process, from /proc/<pid>/status. */
export function memoryOf(pid: number | undefined): Memory | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    const mb = (field: string): number => round(kb(field) / 1024, 1);
    return { rssMB: mb('VmRSS'), peakRssMB: mb('VmHWM'), anonMB: mb('RssAnon'), fileMB: mb('RssFile') };
  } catch {
    return undefined;
  }
}

const CLOCK_TICKS = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system, all threads) a process has used so far, from /proc/<pid>/stat. */
/** CPU seconds of process `pid`, all threads; of its main thread (the event loop) alone with `mainThread`. */
function cpuSecondsOf(pid: number | undefined, mainThread = false): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

export interface Cpu {
  /** Server CPU over the measured run, in % of one core. */
  serverPct: number;
  /** Server CPU per completed request, in microseconds. */
  serverUsPerReq: number;
  /** The server's main thread (its event loop) alone, per completed request, in microseconds. */
  eventLoopUsPerReq: number;
  /** This process's (the load generator's) CPU, in % of one core. */
  generatorPct: number;
  /** Server CPU per completed request by thread name (`/proc/<pid>/task/<tid>/comm`), in microseconds: the budget's threads. */
  threadsUsPerReq: Record<string, number>;
  /** The local FoundationDB cluster's CPU (every `fdbserver` on this machine) per completed request, in microseconds, once {@link watchCluster} found one. */
  clusterUsPerReq?: number;
}

/** The `fdbserver` processes on this machine, watched by every {@link cpuMeter} after {@link watchCluster}. */
let clusterPids: number[] = [];

/**
 * Makes every later {@link cpuMeter} read the CPU of the FoundationDB
 * servers running on this machine as well (a cluster on the same cores as
 * Baton and the load generator takes its share of them); returns how many it
 * found. A cluster elsewhere is not seen, and its figure is absent.
 */
export function watchCluster(): number {
  clusterPids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'fdbserver') clusterPids.push(Number(entry));
    } catch {
      // The process exited meanwhile.
    }
  }
  return clusterPids.length;
}

/** CPU seconds of every thread of `pid` by thread name (threads of one name summed), from /proc/<pid>/task. */
export function threadSecondsOf(pid: number | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (pid === undefined) return out;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = tid === String(pid) ? 'event loop' : process.env.BENCH_THREAD_IDS === '1' ? `thread ${tid}` : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '').trim();
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/** `pid` and every process below it (a cluster's primary and its workers), from the parent ids in /proc/<n>/stat. */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4, the parent's pid, is the second after the parenthesised command name.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(parent, [...(parents.get(parent) ?? []), Number(entry)]);
    } catch {
      // The process exited meanwhile.
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i]!) ?? []));
  return tree;
}

/**
 * Starts measuring the CPU of the server `pid` and of this process; call the
 * result with the number of requests completed. With `tree`, the server is
 * `pid` and the processes below it, found now (a cluster's workers): its
 * CPU is theirs summed, and its event loop their main threads' summed.
 */
export function cpuMeter(pid: number | undefined, tree = false): (requests: number) => Cpu {
  const pids: (number | undefined)[] = pid === undefined || !tree ? [pid] : processTree(pid);
  const sum = (mainThread: boolean): number => pids.reduce<number>((total, p) => total + cpuSecondsOf(p, mainThread), 0);
  const server0 = sum(false);
  const main0 = sum(true);
  const threads0 = pids.map((p) => threadSecondsOf(p));
  const cluster = clusterPids;
  const clusterSum = (): number => cluster.reduce<number>((total, p) => total + cpuSecondsOf(p), 0);
  const cluster0 = clusterSum();
  const generator0 = process.cpuUsage();
  const t0 = performance.now();
  return (requests) => {
    const wall = (performance.now() - t0) / 1000;
    const serverSeconds = sum(false) - server0;
    const mainSeconds = sum(true) - main0;
    const generator = process.cpuUsage(generator0);
    const threadsUsPerReq: Record<string, number> = {};
    pids.forEach((p, i) => {
      for (const [name, seconds] of threadSecondsOf(p)) {
        const used = seconds - (threads0[i]!.get(name) ?? 0);
        if (used > 0) threadsUsPerReq[name] = round((threadsUsPerReq[name] ?? 0) + (used * 1e6) / requests, 1);
      }
    });
    return {
      serverPct: round((100 * serverSeconds) / wall, 1),
      serverUsPerReq: round((serverSeconds * 1e6) / requests, 1),
      eventLoopUsPerReq: round((mainSeconds * 1e6) / requests, 1),
      generatorPct: round((100 * (generator.user + generator.system)) / 1e6 / wall, 1),
      threadsUsPerReq,
      ...(cluster.length === 0 ? {} : { clusterUsPerReq: round(((clusterSum() - cluster0) * 1e6) / requests, 1) }),
    };
  };
}
