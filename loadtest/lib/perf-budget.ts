/**
 * The CPU a create costs every thread of the server, by thread and by part,
 * from Linux `perf` sampling the whole process (V8's own `--cpu-prof` sees
 * only JavaScript threads, and none of LMDB's writer, the kernel's work for
 * its page writes and fsyncs, or V8's helper threads). The server runs with
 * `--perf-basic-prof-only-functions`, so JavaScript frames carry their
 * names and files. Each sample is one 1/F s of one thread's CPU; a part is
 * named by the first rule matching any frame of the sample's stack (the
 * rules go from the most specific to the least), a thread by what its
 * samples run (its JavaScript files, LMDB's writer, V8's tasks).
 *
 * Without `perf` (or without permission to use it) the budget is skipped
 * with that reason.
 *
 * @module
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

export const PERF_FREQUENCY = 999;

/** The node flag that makes JIT frames readable to perf (written to /tmp/perf-<pid>.map). */
export const PERF_NODE_FLAGS = ['--perf-basic-prof-only-functions'];

type Rule = [part: string, pattern: RegExp];

/**
 * Parts named by what runs anywhere in the stack, most specific first: a
 * sample belongs to the first whose pattern matches one of its frames (so
 * canonical JSON under the audit entry is the audit entry's).
 */
const INDEXER = 'indexer: merge and apply (thread and event loop)';
const COMPRESSION = 'record compression (zstd, deflate)';

const PART_RULES: Rule[] = [
  ['garbage collection (V8, all threads)', /Scavenger|MarkCompact|ConcurrentMarking|Sweeper|IncrementalMarking|MinorMarkSweep|ArrayBufferSweeper|GCTracer|Heap::CollectGarbage|Heap::PerformGarbageCollection|ScavengeJob|MemoryAllocator::Unmapper|Evacuat|RememberedSet|PointersUpdating|MarkingWorklist|MarkingVisitor|Marking::|ObjectStats|SlotSet|TypedSlot|EphemeronTable/],
  ['LMDB commit: B-tree, page writes, fsync (writer thread and kernel)', /mdb_txn_commit|WriteWorker|do_write|mdb_cursor_put|mdb_page_|mdb_del|fdatasync/],
  [COMPRESSION, /ZSTD_|HUF_|FSE_|zstd-engine|compression-worker|deflate|longest_match|compress_block|pqdownheap|send_tree|zlib-engine/],
  [INDEXER, /indexer\/|merge-worker|merge-thread|frames\.js/],
  ['term index at create (tokenizing, pending entry)', /domain\/terms\.js|repository\/terms\.js|pending-terms\.js/],
  ['canonical JSON + SHA-256 of the checkpoint', /canonical-json|hashCheckpoint|toStored|SHA256|sha256_block|Hash::HashUpdate|crypto\/hash|JsonStringifier/],
  ['audit entry', /domain\/audit\.js|audit-log\.js/],
  ['zod validation', /node_modules\/zod|fastify\/lib\/validation/],
  ['JSON parse of the body', /secure-json-parse|json-body\.js|JsonParser|JSON\.parse|Utf8Decoder|TextDecoder/],
  ['thread hand-offs (postMessage, commit hand-off to LMDB, async work)', /MessagePort::PostMessage|Message::Serialize|Message::Deserialize|MessagePort::ReceiveMessage|AddToIncomingQueue|ThreadSafeFunction|uv_async_send|startWriting|writeInstructions|napi_create_async_work|napi_queue_async_work|lmdb-pending|store\/lmdb\.js/],
];

/**
 * Parts named by the innermost frame that says what it is: the layers every
 * request runs inside (Fastify, Node's streams, Baton's routes) would
 * otherwise claim everything below them.
 */
const LEAF_RULES: Rule[] = [
  ['store: reads, overlay, transaction (event loop)', /store\/lmdb|lmdb\/read\.js|lmdb\/write\.js|mdb_get|mdb_cursor|mdb_node|getBinaryFast/],
  ['keys and values (tuple packing, MessagePack)', /keyspace\.js|codec\.js|msgpackr/],
  ['HTTP and TCP (Node, Fastify, kernel)', /tcp_|sock_|epoll|__sys_sendmsg|__sys_recvfrom|sys_writev|sys_read|node:_http|node:net|llhttp|fastify|find-my-way|node:internal\/streams|StreamBase|LibuvStreamWrap/],
  ['logging and metrics', /pino|prom-client|metrics\.js/],
  ['service and route glue (Baton JavaScript)', /file:\/\/\/.*\/dist\//],
  ['kernel, other (scheduling, page faults, futex)', /\[kernel|schedule|futex|page_fault|finish_task_switch/],
];

export interface Budget {
  /** Samples taken and the creates they cover. */
  samples: number;
  creates: number;
  /** µs of CPU a create, by thread role. */
  byThread: Record<string, number>;
  /** µs of CPU a create, by part. */
  byPart: Record<string, number>;
  /** µs of CPU a create, by thread role, then part. */
  byThreadAndPart: Record<string, Record<string, number>>;
  /** µs of CPU a create, by thread role, then the innermost frame sampled (its symbol, or its library's name when perf has none). */
  byThreadAndLeaf: Record<string, Record<string, number>>;
}

/** Whether `perf record` works here; the reason when it does not. */
export function perfUnavailable(): string | undefined {
  const probe = spawnSync('perf', ['stat', '-e', 'cpu-clock', 'true'], { encoding: 'utf8' });
  if (probe.error !== undefined) return 'perf is not installed (Debian: linux-perf)';
  if (probe.status !== 0) return `perf cannot sample here: ${probe.stderr.trim().split('\n').pop()}`;
  return undefined;
}

/** Starts sampling every thread of `pid`; the result stops it. */
export function startPerf(pid: number, file: string): () => Promise<void> {
  const child: ChildProcess = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(PERF_FREQUENCY), '-g', '-p', String(pid), '-o', file], { stdio: ['ignore', 'ignore', 'inherit'] });
  return () =>
    new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGINT');
    });
}

interface Sample {
  tid: number;
  frames: string[];
}

function* samplesOf(file: string): Generator<Sample> {
  const script = spawnSync('perf', ['script', '-i', file, '-F', 'tid,ip,sym,dso'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (script.error !== undefined || script.status !== 0) {
    process.stderr.write(`perf script read nothing from ${file}: ${script.error?.message ?? `exit ${script.status}`} ${script.stderr?.trim().split('\n').slice(-3).join(' ') ?? ''}\n`);
  }
  let current: Sample | undefined;
  for (const line of (script.stdout ?? '').split('\n')) {
    if (line === '') {
      if (current !== undefined) yield current;
      current = undefined;
    } else if (!line.startsWith('\t')) {
      // A sample's first line is its thread id, right-aligned (a space before an id under five digits); its frames start with a tab.
      current = { tid: Number(line.trim().split(/\s+/)[0]), frames: [] };
    } else if (current !== undefined) {
      current.frames.push(line.trim().replace(/^[0-9a-f]+ /, ''));
    }
  }
  if (current !== undefined) yield current;
}

/** What a thread is, from one sample's frames; undefined when the sample does not tell. */
function roleOf(frames: string[]): string | undefined {
  const text = frames.join('\n');
  if (/compression-worker|ZSTD_compress|zlib-engine|deflate_fast|deflate_slow|longest_match|compress_block/.test(text) && !/node::ThreadPoolWork/.test(text)) return 'compression thread';
  if (/merge-worker|frames\.js/.test(text)) return 'merge thread';
  if (/node::ThreadPoolWork|uv_work/.test(text)) return 'libuv pool (LMDB writer)';
  if (/v8::platform|DefaultWorkerThreadsTaskRunner|WorkerThreadsTaskRunner/.test(text)) return 'V8 helpers (GC, compiler)';
  return undefined;
}

/** Reads the recording: the budget of `creates` creates, by thread and by part. */
export function budgetOf(file: string, pid: number, creates: number): Budget {
  const samples = [...samplesOf(file)];
  const votes = new Map<number, Map<string, number>>();
  for (const { tid, frames } of samples) {
    const role = roleOf(frames);
    if (role === undefined) continue;
    const counts = votes.get(tid) ?? new Map<string, number>();
    counts.set(role, (counts.get(role) ?? 0) + 1);
    votes.set(tid, counts);
  }
  const roles = new Map<number, string>([...votes].map(([tid, counts]) => [tid, [...counts].sort((a, b) => b[1] - a[1])[0]![0]]));
  const perSample = 1e6 / PERF_FREQUENCY / creates;
  const budget: Budget = { samples: samples.length, creates, byThread: {}, byPart: {}, byThreadAndPart: {}, byThreadAndLeaf: {} };
  const add = (table: Record<string, number>, key: string): void => {
    table[key] = (table[key] ?? 0) + perSample;
  };
  for (const { tid, frames } of samples) {
    const thread = tid === pid ? 'event loop' : (roles.get(tid) ?? 'other threads');
    // A worker thread's samples are its part's, whatever frames the walk recovered (inlined or cut-off stacks).
    const part =
      (thread === 'merge thread' ? INDEXER : thread === 'compression thread' ? COMPRESSION : undefined) ??
      PART_RULES.find(([, pattern]) => frames.some((frame) => pattern.test(frame)))?.[0] ??
      frames.map((frame) => LEAF_RULES.find(([, pattern]) => pattern.test(frame))?.[0]).find((name) => name !== undefined) ??
      'other (runtime, libc)';
    add(budget.byThread, thread);
    add(budget.byPart, part);
    add((budget.byThreadAndPart[thread] ??= {}), part);
    add((budget.byThreadAndLeaf[thread] ??= {}), leafOf(frames));
  }
  return budget;
}

/** A frame as `perf script` prints it (`symbol+0x12 (library)`), without its offset; the library when the symbol is unknown. */
function frameName(frame: string): string {
  const match = /^(.*?)(?:\+0x[0-9a-f]+)? \((.*)\)$/.exec(frame);
  if (match === null) return frame;
  const [, symbol, library] = match;
  return symbol === '[unknown]' ? `[unknown] (${library!.split('/').pop()})` : symbol!.replace(/^(LazyCompile|Function|JS):[*~^]?/, '').replace(/file:\/\/\/.*?\/(dist[^/]*|node_modules)\//, '');
}

/** The innermost frame, and under it the innermost JavaScript function when that is another frame (who called a builtin). */
function leafOf(frames: string[]): string {
  if (frames.length === 0) return '(no frame)';
  const leaf = frameName(frames[0]!);
  const script = frames.find((frame) => /\.m?js:\d+/.test(frame));
  const caller = script === undefined ? undefined : frameName(script);
  return caller === undefined || caller === leaf ? leaf : `${leaf} <- ${caller}`;
}

/** The budget as aligned lines: parts by thread, largest first, with totals; with `leaves`, each thread's most sampled innermost frames. */
export function budgetLines(budget: Budget, leaves = 0): string[] {
  const rows = (table: Record<string, number>) => Object.entries(table).sort((a, b) => b[1] - a[1]);
  const total = Object.values(budget.byThread).reduce((sum, us) => sum + us, 0);
  const lines = [`CPU a create, every thread (perf, ${budget.samples} samples over ${budget.creates} creates): ${total.toFixed(0)} µs`];
  lines.push('  by thread:');
  for (const [thread, us] of rows(budget.byThread)) lines.push(`    ${thread.padEnd(68)} ${us.toFixed(0).padStart(6)} µs`);
  lines.push('  by part:');
  for (const [part, us] of rows(budget.byPart)) lines.push(`    ${part.padEnd(68)} ${us.toFixed(0).padStart(6)} µs`);
  for (const [thread, parts] of rows(Object.fromEntries(Object.entries(budget.byThreadAndPart).map(([t, p]) => [t, Object.values(p).reduce((a, b) => a + b, 0)])))) {
    lines.push(`  ${thread} (${parts.toFixed(0)} µs):`);
    for (const [part, us] of rows(budget.byThreadAndPart[thread]!)) if (us >= 1) lines.push(`    ${part.padEnd(68)} ${us.toFixed(0).padStart(6)} µs`);
  }
  if (leaves > 0) {
    for (const [thread, table] of Object.entries(budget.byThreadAndLeaf)) {
      lines.push(`  ${thread}, innermost frames:`);
      for (const [leaf, us] of rows(table).slice(0, leaves)) lines.push(`    ${leaf.slice(0, 90).padEnd(90)} ${us.toFixed(1).padStart(6)} µs`);
    }
  }
  return lines;
}
