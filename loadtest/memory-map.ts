/**
 * Where Baton's anonymous memory is: the server as `npm start` runs it (its
 * V8 flags), `BENCH_LAG_FILL` creates at 32 connections (default 2,000),
 * then `bench:http`'s open loop (500 creates/s and 2,000 reads/s), and
 * after it the process's anonymous memory by kind of mapping
 * (`/proc/<pid>/smaps`: V8's 256 KB pages, malloc's main heap, larger
 * anonymous mappings such as malloc's thread arenas) and each V8 isolate's
 * heap (the event loop's and every worker thread's) from its last GC under
 * `--trace-gc-verbose`: new, old and code space committed, and the array
 * buffers it holds outside its heap (malloc'd). DESIGN §9 asks ≤ 150 MB
 * anonymous under that load; this says which part to work on.
 *
 *   npx tsx loadtest/memory-map.ts
 *   BENCH_LAG_NODE_FLAGS="--max-semi-space-size=16" npx tsx loadtest/memory-map.ts
 *
 * `BENCH_LAG_NODE_FLAGS` adds node flags after the start script's (V8 takes
 * the last of a flag given twice). An isolate is named by its address in
 * V8's output; the event loop's is the one with the most GCs of a 64 MB new
 * space, the merge thread's the busiest worker.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { TempDirs } from './lib/cleanup.js';
import { envNumber, nodeFlags } from './lib/env.js';
import { TOKEN } from './lib/http-config.js';
import { concurrently, createCheckpoint } from './lib/http-client.js';
import { taskId, useBodies } from './lib/http-payloads.js';
import { openLoopMeasured } from './lib/open-loop.js';
import { memoryOf } from './lib/proc.js';
import { BATON_MAIN, killServers, startServer, stopServers } from './lib/servers.js';

const FILL = envNumber('BENCH_LAG_FILL', 2_000, true);

/** One isolate's last GC, as `--trace-gc-verbose` printed it. */
interface IsolateHeap {
  gcs: number;
  /** Committed KB by space name ("New space", "Old space", …) and "Backing store memory". */
  spaces: Map<string, number>;
}

/** Reads `--trace-gc-verbose` lines, `[pid:isolate] …`, into each isolate's last figures. */
class GcTrace {
  readonly isolates = new Map<string, IsolateHeap>();
  private partial = '';

  add(chunk: Buffer): void {
    const lines = (this.partial + chunk.toString()).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) this.line(line);
  }

  private line(line: string): void {
    const head = /^\[\d+:(0x[0-9a-f]+)\]\s+(.*)$/.exec(line);
    if (head === null) return;
    const heap = this.isolates.get(head[1]!) ?? { gcs: 0, spaces: new Map<string, number>() };
    this.isolates.set(head[1]!, heap);
    const text = head[2]!;
    if (/^\d+ ms: (Scavenge|Mark-Compact|Minor)/.test(text)) heap.gcs += 1;
    const space = /^([A-Za-z -]+? space|All spaces),.*committed:\s+(\d+) KB/.exec(text);
    if (space !== null) heap.spaces.set(space[1]!, Number(space[2]));
    const backing = /^Backing store memory:\s+(\d+) KB/.exec(text);
    if (backing !== null) heap.spaces.set('Backing store memory', Number(backing[1]));
  }
}

/** Anonymous KB of the process by kind of mapping. */
function anonymousByMapping(pid: number): Map<string, number> {
  const kinds = new Map<string, number>();
  let kind = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping !== null) {
      const kb = (parseInt(mapping[2]!, 16) - parseInt(mapping[1]!, 16)) / 1024;
      const name = mapping[3]!;
      kind = name === '[heap]' ? "malloc's main heap ([heap])" : name !== '' ? 'file-backed or named' : kb === 256 ? "V8's 256 KB pages" : kb >= 1024 ? 'anonymous mappings of 1 MB or more (malloc arenas, large objects)' : 'smaller anonymous mappings';
      continue;
    }
    const anonymous = /^Anonymous:\s+(\d+) kB/.exec(line);
    if (anonymous !== null) kinds.set(kind, (kinds.get(kind) ?? 0) + Number(anonymous[1]));
  }
  return kinds;
}

const mb = (kb: number | undefined): string => (kb === undefined ? '-' : (kb / 1024).toFixed(1));

async function main(): Promise<void> {
  const tempDirs = new TempDirs('memory-map');
  process.on('exit', () => {
    killServers();
    tempDirs.removeAll();
  });
  useBodies('evolving');
  const env = { BATON_DATA_DIR: tempDirs.make('data'), BATON_TOKENS: `writer:${TOKEN}`, BATON_RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1' };
  const baton = await startServer('baton', BATON_MAIN, env, '/readyz', ['--trace-gc-verbose', ...nodeFlags('BENCH_LAG_NODE_FLAGS')]);
  const trace = new GcTrace();
  baton.child.stdout!.on('data', (chunk: Buffer) => trace.add(chunk));
  const pid = baton.child.pid!;
  console.log(`started: anonymous ${memoryOf(pid)?.anonMB} MB`);
  const ids = (await concurrently(FILL, 32, (i) => createCheckpoint(baton.url, taskId(i)))).map((made) => made.id);
  console.log(`after ${FILL} creates at 32 connections: anonymous ${memoryOf(pid)?.anonMB} MB`);
  const open = await openLoopMeasured(baton, ids);
  const after = memoryOf(pid);
  console.log(`after the open loop (create p99 ${open.streams.create?.p99Ms} ms, read p99 ${open.streams.read?.p99Ms} ms): anonymous ${after?.anonMB} MB, RSS ${after?.rssMB} MB`);
  console.log('\nanonymous memory by mapping, MB');
  for (const [kind, kb] of [...anonymousByMapping(pid)].sort((a, b) => b[1] - a[1])) console.log(`  ${mb(kb).padStart(7)}  ${kind}`);
  console.log('\nV8 isolates at their last GC, committed MB (array buffers: outside the heap, in malloc)');
  console.log('  isolate              GCs    new    old   code  large  all spaces  array buffers');
  const isolates = [...trace.isolates].sort((a, b) => (b[1].spaces.get('All spaces') ?? 0) - (a[1].spaces.get('All spaces') ?? 0));
  for (const [address, { gcs, spaces }] of isolates) {
    const cells = [spaces.get('New space'), spaces.get('Old space'), spaces.get('Code space'), spaces.get('Large object space')].map((kb) => mb(kb).padStart(6));
    console.log(`  ${address.padEnd(18)} ${String(gcs).padStart(5)} ${cells.join(' ')} ${mb(spaces.get('All spaces')).padStart(11)} ${mb(spaces.get('Backing store memory')).padStart(14)}`);
  }
  await stopServers();
}

await main();
