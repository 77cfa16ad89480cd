/**
 * HTTP benchmark (DESIGN §9): the real Baton server and a bare Fastify route
 * with the same payloads (`bare-server.ts`), each in its own child process,
 * driven from this process over loopback, measured in the same run so that
 * every target is a ratio against the bare route.
 *
 *   npm run bench:http             (= npx tsx loadtest/http-bench.ts)
 *
 * Closed loop (autocannon, BENCH_CONNECTIONS connections, each scenario
 * BENCH_SECONDS after a discarded warm-up):
 *   create        POST /v1/checkpoints, ~2 KB bodies, unique content, task ids
 *                 round-robin over 1,000 tasks (1,000 concurrent open tasks)
 *   bare POST     the same bodies to the bare route
 *   get           GET /v1/checkpoints/:id over 2,000 pre-created checkpoints
 *   bare GET      the same paths; the bare route answers a real Baton checkpoint
 *   patch         PATCH /v1/checkpoints/:id with If-Match; no two requests in
 *                 flight share a checkpoint, the next If-Match is the ETag of
 *                 the previous answer; 200 and 412 are counted
 *   history(100)  GET /v1/tasks/:taskId/checkpoints?limit=100 on 5 tasks with
 *                 120 checkpoints each, at BENCH_CONNECTIONS and at 1 connection
 * Open loop (no autocannon): evenly paced BENCH_OPEN_CREATES creates/s and
 * BENCH_OPEN_READS reads/s for BENCH_SECONDS, each request timed from its
 * intended send time, against Baton and against the bare routes.
 *
 * Environment:
 *   BENCH_SECONDS          measured seconds per scenario (default 8)
 *   BENCH_WARMUP_SECONDS   discarded warm-up per scenario (default min(2, BENCH_SECONDS / 4))
 *   BENCH_CONNECTIONS      autocannon connections (default 100)
 *   BENCH_OPEN_CREATES     open-loop creates per second (default 500)
 *   BENCH_OPEN_READS       open-loop reads per second (default 2000)
 *   BENCH_RATE_LIMIT_PER_MINUTE  Baton's per-token rate limit for the run
 *                          (default 1000000000: the limiter runs but never refuses;
 *                          the service's own default, 100000/min, is 1,667 requests/s
 *                          for the one token the benchmark uses)
 *   BENCH_CPU_PROF_DIR     run Baton with --cpu-prof, writing the profile there
 *
 * Prints aligned tables and, last, one line `RESULT {json}` with every figure.
 * Nothing here asserts on time. Children are stopped and temp dirs removed at
 * the end, on error and on SIGINT/SIGTERM.
 *
 * @module
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import http from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import { fastifyOptions } from '../src/http/plugins/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function envNumber(name: string, fallback: number, integer: boolean): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, not "${raw}".`);
  }
  return value;
}

const SECONDS = envNumber('BENCH_SECONDS', 8, false);
const WARMUP_SECONDS = envNumber('BENCH_WARMUP_SECONDS', Math.min(2, SECONDS / 4), false);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 100, true);
const OPEN_CREATES = envNumber('BENCH_OPEN_CREATES', 500, false);
const OPEN_READS = envNumber('BENCH_OPEN_READS', 2000, false);
const RATE_LIMIT = envNumber('BENCH_RATE_LIMIT_PER_MINUTE', 1_000_000_000, true);
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR || undefined;

const OPEN_TASKS = 1000;
const GET_CHECKPOINTS = 2000;
const HISTORY_TASKS = 5;
const HISTORY_PER_TASK = 120;
const HISTORY_LIMIT = 100;
/** Checkpoints the PATCH scenario cycles through: one per connection, and spares. */
const PATCH_CHECKPOINTS = CONNECTIONS + 50;
const PREP_CONCURRENCY = 32;

const TOKEN = randomBytes(24).toString('base64url'); // 32 characters

// ---------------------------------------------------------------------------
// Payloads

const taskId = (i: number): string => `bench-task-${String(i % OPEN_TASKS).padStart(4, '0')}`;
const historyTaskId = (i: number): string => `bench-history-${i}`;

/** A realistic checkpoint body of about 2 KB; `n` makes its content unique. */
function checkpointBody(task: string, n: number): string {
  const at = new Date(1_760_000_000_000 + n * 1000).toISOString();
  return JSON.stringify({
    taskId: task,
    agentId: `agent-${n % 64}`,
    agentType: 'builder',
    iteration: 1 + (n % 7),
    executionState: {
      phase: 'implementing',
      completedItems: [
        {
          id: 'step-1',
          description: 'Add the lease table, its key layout and the migration that creates it',
          files: { created: ['src/store/leases.ts'], modified: ['src/store/keyspace.ts', 'src/store/store.ts'] },
          at,
        },
        {
          id: 'step-2',
          description: 'Reject writes that carry an older fencing epoch with 409 lease_superseded',
          files: { modified: ['src/service/task-write.ts', 'src/errors.ts'] },
          at,
        },
        'Ran the store test suite against LMDB: 212 passed',
      ],
      pendingItems: [
        { id: 'step-3', description: 'Emit LEASE_EXPIRED from the sweeper and document the orchestrator contract' },
        { id: 'step-4', description: 'Property tests: no interleaving of renew and expire lets two holders write' },
        'Update docs/leases.md with the epoch rules',
      ],
      blockedItems: [],
      currentFocus: `Run ${n}: wiring the fencing check into PATCH and finalize, then the handoff path`,
    },
    contextSummary: {
      keyDecisions: [
        {
          decision: 'Fencing tokens are per-task epochs, not per-lease random ids',
          rationale: 'A monotonic epoch lets any store reject stale writers with one comparison inside the write transaction',
          at,
          by: 'agent-architect',
        },
        'Leases expire by wall clock on the server only; clients never compare clocks',
      ],
      assumptions: ['At most one orchestrator restarts a crashed agent', 'Clock skew between replicas stays under 500 ms'],
      constraints: ['No new runtime dependencies', 'Every write stays one transaction'],
      externalDependencies: [],
    },
    metrics: {
      tokensConsumed: 40_000 + n,
      toolsInvoked: 17 + (n % 40),
      filesModified: ['src/store/keyspace.ts', 'src/service/task-write.ts', 'src/errors.ts'],
      contextUtilization: 0.42,
      testsStatus: { passed: 212, failed: 1, skipped: 3, coveragePercent: 87.5 },
    },
    recovery: {
      lastSuccessfulState: null,
      rollbackInstructions: 'git checkout -- src/service/task-write.ts && npm test',
      continuationPrompt: 'Continue with step-3: the sweeper emits LEASE_EXPIRED; keep the epoch check in one place (task-write.ts).',
    },
    labels: { team: 'platform', epic: 'leases', run: n },
  });
}

function patchBody(n: number): string {
  return JSON.stringify({ executionState: { currentFocus: `Patch ${n}: fencing check in finalize` }, metrics: { tokensConsumed: 50_000 + n } });
}

// ---------------------------------------------------------------------------
// Statistics

/** Nearest-rank percentile of ascending `sorted`. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

function round(value: number, digits: number): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

interface Latency {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function latencyOf(samples: number[]): Latency {
  const sorted = Float64Array.from(samples).sort();
  return {
    p50Ms: round(percentile(sorted, 0.5), 3),
    p99Ms: round(percentile(sorted, 0.99), 3),
    maxMs: round(sorted.length === 0 ? NaN : sorted[sorted.length - 1]!, 3),
  };
}

// ---------------------------------------------------------------------------
// Child processes and temp dirs, stopped and removed whatever happens

const children = new Set<ChildProcess>();
const tempDirs: string[] = [];

function tempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `baton-http-bench-${label}-`));
  tempDirs.push(dir);
  return dir;
}

function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (!exited(child)) {
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await gone;
    clearTimeout(timer);
  }
  children.delete(child);
}

async function cleanup(): Promise<void> {
  await Promise.all([...children].map((child) => stopChild(child)));
  removeTempDirs();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers and removing temp dirs`);
    void cleanup().finally(() => process.exit(130));
  });
}
process.on('exit', () => {
  for (const child of children) if (!exited(child)) child.kill('SIGKILL');
  removeTempDirs();
});

interface Server {
  name: string;
  child: ChildProcess;
  url: string;
  host: string;
  port: number;
  /** The server's output (bounded), for diagnostics. */
  output: () => string;
  /** Lines of the server's output: with LOG_LEVEL=warn, every one is a warning or an error. */
  lines: string[];
}

/** The TCP ports `pid` listens on, from /proc (Linux): its socket inodes matched against /proc/net/tcp{,6}. */
function listeningPorts(pid: number): number[] {
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

/**
 * Starts a server with `node --import tsx <script>` and finds where it
 * listens: from its "Server listening at" line when it logs one (it does not
 * at LOG_LEVEL=warn), else from the sockets it listens on, probing `probePath`.
 */
async function startServer(name: string, script: string, env: Record<string, string>, probePath: string, nodeArgs: string[] = []): Promise<Server> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  const lines: string[] = [];
  let partial = '';
  const onData = (chunk: Buffer): void => {
    const text = chunk.toString();
    output = (output + text).slice(-64 * 1024);
    const parts = (partial + text).split('\n');
    partial = parts.pop()!;
    for (const line of parts) if (line.trim() !== '' && lines.length < 1000) lines.push(line);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const host = env.HOST ?? '127.0.0.1';
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited(child)) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before listening:\n${output}`);
    if (Date.now() > deadline) throw new Error(`${name} did not listen within 30 s:\n${output}`);
    const logged = /Server listening at http:\/\/[^:\s]+:(\d+)/.exec(output);
    const candidates = logged ? [Number(logged[1])] : child.pid === undefined ? [] : listeningPorts(child.pid);
    for (const port of candidates) {
      const url = `http://${host}:${port}`;
      try {
        const response = await fetch(url + probePath, { signal: AbortSignal.timeout(2_000) });
        await response.arrayBuffer();
        if (response.ok) {
          lines.splice(0); // startup output is not a warning under load
          return { name, child, url, host, port, output: () => output, lines };
        }
      } catch {
        // Not answering yet.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function assertAlive(server: Server): void {
  if (exited(server.child)) {
    throw new Error(`${server.name} exited (${server.child.exitCode ?? server.child.signalCode}) during the run:\n${server.output().slice(-4000)}`);
  }
}

interface Memory {
  rssMB: number;
  peakRssMB: number;
  /** Heap and other private memory. */
  anonMB: number;
  /** File-backed pages: LMDB's memory map, the node binary and libraries. */
  fileMB: number;
}

/** VmRSS, VmHWM (peak RSS), RssAnon and RssFile of a process, from /proc/<pid>/status. */
function memoryOf(pid: number | undefined): Memory | undefined {
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
function cpuSecondsOf(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

interface Cpu {
  /** Server CPU over the measured run, in % of one core. */
  serverPct: number;
  /** Server CPU per completed request, in microseconds. */
  serverUsPerReq: number;
  /** This process's (the load generator's) CPU, in % of one core. */
  generatorPct: number;
}

/** Starts measuring server and generator CPU; call the result with the number of requests completed. */
function cpuMeter(server: Server): (requests: number) => Cpu {
  const server0 = cpuSecondsOf(server.child.pid);
  const generator0 = process.cpuUsage();
  const t0 = performance.now();
  return (requests) => {
    const wall = (performance.now() - t0) / 1000;
    const serverSeconds = cpuSecondsOf(server.child.pid) - server0;
    const generator = process.cpuUsage(generator0);
    return {
      serverPct: round((100 * serverSeconds) / wall, 1),
      serverUsPerReq: round((serverSeconds * 1e6) / requests, 1),
      generatorPct: round((100 * (generator.user + generator.system)) / 1e6 / wall, 1),
    };
  };
}

// ---------------------------------------------------------------------------
// Setup requests (fetch, concurrent)

const authHeaders = { authorization: `Bearer ${TOKEN}` };
const jsonHeaders = { ...authHeaders, 'content-type': 'application/json' };

async function call(url: string, init: RequestInit = {}): Promise<{ status: number; etag: string | null; body: string }> {
  const response = await fetch(url, { ...init, headers: { ...jsonHeaders, ...(init.headers as Record<string, string> | undefined) } });
  return { status: response.status, etag: response.headers.get('etag'), body: await response.text() };
}

/** Runs `work(i)` for i < n, `concurrency` at a time. */
async function concurrently<T>(n: number, concurrency: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(n);
  let next = 0;
  const loop = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) results[i] = await work(i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, loop));
  return results;
}

interface Created {
  id: string;
  version: number;
  body: string;
}

let bodyCounter = 0;

async function createCheckpoint(base: string, task: string): Promise<Created> {
  const response = await call(`${base}/v1/checkpoints`, { method: 'POST', body: checkpointBody(task, bodyCounter++) });
  if (response.status !== 201) throw new Error(`Setup: creating a checkpoint answered ${response.status}: ${response.body.slice(0, 500)}`);
  const parsed = JSON.parse(response.body) as { id: string; version: number };
  return { id: parsed.id, version: parsed.version, body: response.body };
}

function versionOf(etag: string | null | undefined): number | undefined {
  const match = /^(?:W\/)?"?(\d+)"?$/.exec(etag ?? '');
  return match ? Number(match[1]) : undefined;
}

// ---------------------------------------------------------------------------
// Closed loop (autocannon)

interface ClosedFigures {
  connections: number;
  seconds: number;
  requests: number;
  reqPerSec: number;
  okPerSec: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  cpu: Cpu;
  extra?: Record<string, number>;
}

type Requests = autocannon.Request[];

function cannon(url: string, requests: Requests, connections: number, seconds: number, onLatency?: (ms: number) => void): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, connections, duration: seconds, requests, headers: jsonHeaders as Record<string, string>, timeout: 10 },
      (error: unknown, result: autocannon.Result) => (error ? reject(error) : resolve(result)),
    );
    if (onLatency) instance.on('response', (_client, _status, _bytes, ms) => onLatency(ms));
  });
}

/**
 * Warm-up (discarded), then the measured run. `requests()` is called for each
 * run; `before()` runs before each (e.g. to resynchronise state the warm-up
 * left behind). Latency is recorded per response in ms (float) from
 * autocannon's own timer, over every status.
 */
async function closedLoop(
  server: Server,
  requests: () => Requests,
  connections = CONNECTIONS,
  before?: () => Promise<void>,
): Promise<ClosedFigures> {
  await before?.();
  await cannon(server.url, requests(), connections, WARMUP_SECONDS);
  assertAlive(server);
  await before?.();
  const samples: number[] = [];
  const meter = cpuMeter(server);
  const result = await cannon(server.url, requests(), connections, SECONDS, (ms) => samples.push(ms));
  const cpu = meter(samples.length);
  assertAlive(server);
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = count ?? 0;
  const seconds = result.duration;
  return {
    connections,
    seconds,
    requests: samples.length,
    reqPerSec: round(samples.length / seconds, 1),
    okPerSec: round(result['2xx'] / seconds, 1),
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    ...latencyOf(samples),
    cpu,
  };
}

function postRequests(): Requests {
  let n = 0;
  return [
    {
      method: 'POST',
      path: '/v1/checkpoints',
      setupRequest: (request) => {
        const i = n++;
        // Round-robin over the 1,000 open tasks; `bodyCounter` keeps content unique across runs.
        request.body = checkpointBody(taskId(i), bodyCounter++);
        return request;
      },
    },
  ];
}

function getRequests(ids: string[]): () => Requests {
  return () => {
    let n = 0;
    return [
      {
        method: 'GET',
        path: `/v1/checkpoints/${ids[0]}`,
        setupRequest: (request) => {
          request.path = `/v1/checkpoints/${ids[n++ % ids.length]}`;
          return request;
        },
      },
    ];
  };
}

function historyRequests(): Requests {
  let n = 0;
  return [
    {
      method: 'GET',
      path: `/v1/tasks/${historyTaskId(0)}/checkpoints?limit=${HISTORY_LIMIT}`,
      setupRequest: (request) => {
        request.path = `/v1/tasks/${historyTaskId(n++ % HISTORY_TASKS)}/checkpoints?limit=${HISTORY_LIMIT}`;
        return request;
      },
    },
  ];
}

interface Slot {
  id: string;
  version: number;
}

/**
 * PATCH with If-Match. A pool of checkpoints (more than connections): each
 * request takes one in setupRequest and hands it back in onResponse with the
 * version of the answer's ETag, so no two requests in flight touch the same
 * checkpoint and every If-Match is the latest ETag: a 412 means the server
 * lost or misreported a version. Slots whose version is unknown (another
 * status, a 412 without currentVersion) are re-read before they return.
 */
class PatchScenario {
  private pool: Slot[] = [];
  counts = { ok200: 0, conflict412: 0, other: 0, resyncs: 0, poolEmpty: 0 };
  private n = 0;
  /** Bumped by resync: hand-backs from an earlier run are ignored. */
  private generation = 0;

  constructor(
    private readonly base: string,
    private readonly slots: Slot[],
  ) {}

  /** Re-reads every slot's version (a run's last answers are lost when autocannon closes its connections). */
  async resync(): Promise<void> {
    this.generation++;
    this.pool = [];
    await concurrently(this.slots.length, PREP_CONCURRENCY, async (i) => {
      const slot = this.slots[i]!;
      const response = await call(`${this.base}/v1/checkpoints/${slot.id}`);
      slot.version = versionOf(response.etag) ?? slot.version;
    });
    this.pool = this.slots.slice();
    this.counts = { ok200: 0, conflict412: 0, other: 0, resyncs: 0, poolEmpty: 0 };
  }

  requests(): Requests {
    return [
      {
        method: 'PATCH',
        path: '/v1/checkpoints/00000000-0000-7000-8000-000000000000',
        setupRequest: (request, context) => {
          let slot = this.pool.pop();
          if (slot === undefined) {
            // Should not happen (the pool has spares); share a slot rather than stop.
            this.counts.poolEmpty++;
            slot = this.slots[this.n % this.slots.length]!;
          }
          (context as { slot?: Slot }).slot = slot;
          request.path = `/v1/checkpoints/${slot.id}`;
          request.headers = { ...request.headers, 'content-type': 'application/merge-patch+json', 'if-match': `"${slot.version}"` };
          request.body = patchBody(this.n++);
          return request;
        },
        onResponse: (status, body, context, headers) => {
          const slot = (context as { slot?: Slot }).slot;
          if (slot === undefined) return;
          (context as { slot?: Slot }).slot = undefined;
          const etag = headers ? Object.entries(headers).find(([key]) => key.toLowerCase() === 'etag')?.[1] : undefined;
          if (status === 200) {
            this.counts.ok200++;
            slot.version = versionOf(String(etag)) ?? slot.version + 1;
            this.pool.push(slot);
            return;
          }
          if (status === 412) this.counts.conflict412++;
          else this.counts.other++;
          let current: number | undefined;
          try {
            const problem = JSON.parse(body) as { currentVersion?: unknown };
            if (typeof problem.currentVersion === 'number') current = problem.currentVersion;
          } catch {
            // Not JSON.
          }
          if (current !== undefined) {
            slot.version = current;
            this.pool.push(slot);
            return;
          }
          this.counts.resyncs++;
          const generation = this.generation;
          void call(`${this.base}/v1/checkpoints/${slot.id}`)
            .then((response) => {
              slot.version = versionOf(response.etag) ?? slot.version;
            })
            .catch(() => undefined)
            .finally(() => {
              if (generation === this.generation) this.pool.push(slot);
            });
        },
      },
    ];
  }
}

// ---------------------------------------------------------------------------
// Open loop (node:http keep-alive, paced by a timer, timed from the intended send)

interface PacedStream {
  name: string;
  rate: number;
  request: (k: number) => { method: string; path: string; body?: string };
}

interface OpenFigures {
  rate: number;
  scheduled: number;
  completed: number;
  achievedPerSec: number;
  ok: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

interface OpenRun {
  streams: Record<string, OpenFigures>;
  all: Latency;
  /** How late requests were handed to the socket layer after their intended send time (generator health). */
  schedulerLag: Latency;
  /** Most requests in flight at once. */
  maxInFlight: number;
  cpu: Cpu;
}

async function openLoop(server: Server, agent: http.Agent, streams: PacedStream[], seconds: number): Promise<OpenRun> {
  const meter = cpuMeter(server);
  const baseHeaders = { ...jsonHeaders, host: `${server.host}:${server.port}` };
  const stats = streams.map(() => ({ samples: [] as number[], ok: 0, non2xx: 0, errors: 0, statusCodes: {} as Record<string, number> }));
  const all: number[] = [];
  const totals = streams.map((s) => Math.floor(s.rate * seconds));
  const next = streams.map(() => 0);
  let inFlight = 0;
  let maxInFlight = 0;
  const lags: number[] = [];
  let settle: (() => void) | undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const start = performance.now() + 20;
  const intended = (s: number, k: number): number => start + (k * 1000) / streams[s]!.rate;

  const fire = (s: number, k: number, at: number): void => {
    const { method, path, body } = streams[s]!.request(k);
    const stat = stats[s]!;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let done = false;
    const finish = (status: number | undefined): void => {
      if (done) return;
      done = true;
      inFlight--;
      const ms = performance.now() - at;
      if (status === undefined) stat.errors++;
      else {
        stat.statusCodes[status] = (stat.statusCodes[status] ?? 0) + 1;
        if (status >= 200 && status < 300) stat.ok++;
        else stat.non2xx++;
        stat.samples.push(ms);
        all.push(ms);
      }
      if (inFlight === 0 && next.every((n, i) => n >= totals[i]!)) settle?.();
    };
    const headers: Record<string, string | number> = body === undefined ? { ...authHeaders, host: baseHeaders.host } : { ...baseHeaders, 'content-length': Buffer.byteLength(body) };
    const request = http.request({ agent, host: server.host, port: server.port, method, path, headers }, (response) => {
      response.on('data', () => undefined);
      response.on('end', () => finish(response.statusCode));
      response.on('error', () => finish(undefined));
    });
    request.setTimeout(10_000, () => request.destroy(new Error('timeout')));
    request.on('error', () => finish(undefined));
    request.end(body);
  };

  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      let due = Infinity;
      streams.forEach((_, s) => {
        while (next[s]! < totals[s]! && intended(s, next[s]!) <= now) {
          const at = intended(s, next[s]!);
          lags.push(now - at);
          fire(s, next[s]!, at);
          next[s]!++;
        }
        if (next[s]! < totals[s]!) due = Math.min(due, intended(s, next[s]!));
      });
      if (due === Infinity) return resolve();
      setTimeout(tick, Math.max(0, Math.floor(due - performance.now())));
    };
    setTimeout(tick, 20);
  });
  if (inFlight > 0) {
    const limit = new Promise<void>((resolve) => setTimeout(resolve, 15_000).unref());
    await Promise.race([settled, limit]);
  }
  const cpu = meter(all.length);
  assertAlive(server);

  const figures: Record<string, OpenFigures> = {};
  streams.forEach((stream, s) => {
    const stat = stats[s]!;
    figures[stream.name] = {
      rate: stream.rate,
      scheduled: totals[s]!,
      completed: stat.samples.length,
      achievedPerSec: round(stat.samples.length / seconds, 1),
      ok: stat.ok,
      non2xx: stat.non2xx,
      errors: stat.errors + (totals[s]! - stat.samples.length - stat.errors),
      statusCodes: stat.statusCodes,
      ...latencyOf(stat.samples),
    };
  });
  return { streams: figures, all: latencyOf(all), schedulerLag: latencyOf(lags), maxInFlight, cpu };
}

function pacedStreams(readIds: string[]): PacedStream[] {
  return [
    {
      name: 'create',
      rate: OPEN_CREATES,
      request: (k) => ({ method: 'POST', path: '/v1/checkpoints', body: checkpointBody(taskId(k), bodyCounter++) }),
    },
    {
      name: 'read',
      rate: OPEN_READS,
      request: (k) => ({ method: 'GET', path: `/v1/checkpoints/${readIds[k % readIds.length]}` }),
    },
  ];
}

/** Warm-up (discarded), then the measured run, over the same keep-alive connections. */
async function openLoopMeasured(server: Server, readIds: string[]): Promise<OpenRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  try {
    await openLoop(server, agent, pacedStreams(readIds), WARMUP_SECONDS);
    return await openLoop(server, agent, pacedStreams(readIds), SECONDS);
  } finally {
    agent.destroy();
  }
}

// ---------------------------------------------------------------------------
// Output

function alignedTable(head: string[], body: string[][], leftColumns: number): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '-');

function codes(statusCodes: Record<string, number>): string {
  return Object.entries(statusCodes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, count]) => `${code}:${count}`)
    .join(' ');
}

function closedTable(rows: [string, string, ClosedFigures][]): string {
  const head = ['scenario', 'server', 'conns', 'secs', 'requests', 'req/s', '2xx/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'srv cpu', 'srv us/req', 'gen cpu', 'status codes'];
  const body = rows.map(([name, server, f]) => [
    name,
    server,
    String(f.connections),
    fixed(f.seconds, 2),
    String(f.requests),
    fixed(f.reqPerSec, 0),
    fixed(f.okPerSec, 0),
    fixed(f.p50Ms, 2),
    fixed(f.p99Ms, 2),
    fixed(f.maxMs, 2),
    String(f.non2xx),
    String(f.errors),
    `${fixed(f.cpu.serverPct, 0)} %`,
    fixed(f.cpu.serverUsPerReq, 0),
    `${fixed(f.cpu.generatorPct, 0)} %`,
    codes(f.statusCodes),
  ]);
  return alignedTable(head, body, 2).replace(/ +$/gm, '');
}

function openTable(runs: [string, OpenRun][]): string {
  const head = ['open loop', 'server', 'rate/s', 'scheduled', 'done/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'srv cpu', 'srv us/req', 'gen cpu', 'status codes'];
  const body: string[][] = [];
  for (const [server, run] of runs) {
    for (const [name, f] of Object.entries(run.streams)) {
      body.push([
        name,
        server,
        fixed(f.rate, 0),
        String(f.scheduled),
        fixed(f.achievedPerSec, 0),
        fixed(f.p50Ms, 2),
        fixed(f.p99Ms, 2),
        fixed(f.maxMs, 2),
        String(f.non2xx),
        String(f.errors),
        '',
        '',
        '',
        codes(f.statusCodes),
      ]);
    }
    body.push([
      'all',
      server,
      '',
      '',
      '',
      fixed(run.all.p50Ms, 2),
      fixed(run.all.p99Ms, 2),
      fixed(run.all.maxMs, 2),
      '',
      '',
      `${fixed(run.cpu.serverPct, 0)} %`,
      fixed(run.cpu.serverUsPerReq, 0),
      `${fixed(run.cpu.generatorPct, 0)} %`,
      '',
    ]);
  }
  return alignedTable(head, body, 2).replace(/ +$/gm, '');
}

const pct = (ratio: number): string => (Number.isFinite(ratio) ? `${(ratio * 100).toFixed(1)} %` : '-');
const times = (ratio: number): string => (Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : '-');
const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');

// ---------------------------------------------------------------------------

async function main(): Promise<void> {
  const dataDir = tempDir('data');
  const batonEnv: Record<string, string> = {
    BATON_DATA_DIR: dataDir,
    BATON_TOKENS: `writer:${TOKEN}`,
    BATON_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    LOG_LEVEL: 'warn',
    PORT: '0',
    HOST: '127.0.0.1',
  };
  // The same body limit as Baton's (fastifyOptions derives it from the checkpoint size limit).
  const bodyLimit = fastifyOptions(loadConfig({ ...process.env, ...batonEnv })).bodyLimit;
  const sampleBytes = Buffer.byteLength(checkpointBody(taskId(0), 0));
  console.log(
    `http bench: ${SECONDS} s per scenario after ${WARMUP_SECONDS} s warm-up, ${CONNECTIONS} connections, ` +
      `${OPEN_TASKS} open tasks, create body ${sampleBytes} B, body limit ${bodyLimit} B, ` +
      `rate limit ${RATE_LIMIT}/min, node ${process.version}, ${cpus().length} CPUs`,
  );

  const cpuProfArgs = CPU_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF_DIR] : [];
  const [baton, bare] = await Promise.all([
    startServer('baton', 'src/main.ts', batonEnv, '/readyz', cpuProfArgs),
    startServer('bare', 'loadtest/bare-server.ts', { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', BARE_BODY_LIMIT: String(bodyLimit) }, '/v1/checkpoints/x'),
  ]);
  console.log(`baton pid ${baton.child.pid} at ${baton.url} (data ${dataDir}); bare pid ${bare.child.pid} at ${bare.url}`);
  const memorySamples: Memory[] = [];
  const sampleMemory = (): void => {
    const m = memoryOf(baton.child.pid);
    if (m) memorySamples.push(m);
  };

  // --- Setup: checkpoints to read, to patch, and five long histories.
  const prepStarted = performance.now();
  const readable = await concurrently(GET_CHECKPOINTS, PREP_CONCURRENCY, (i) => createCheckpoint(baton.url, taskId(i)));
  const readIds = readable.map((c) => c.id);
  const patchSlots: Slot[] = (await concurrently(PATCH_CHECKPOINTS, PREP_CONCURRENCY, (i) => createCheckpoint(baton.url, taskId(i)))).map(
    ({ id, version }) => ({ id, version }),
  );
  await concurrently(HISTORY_TASKS * HISTORY_PER_TASK, PREP_CONCURRENCY, (i) => createCheckpoint(baton.url, historyTaskId(i % HISTORY_TASKS)));
  // Sanity: a history page holds 100 items; a read answers with an ETag.
  const page = await call(`${baton.url}/v1/tasks/${historyTaskId(0)}/checkpoints?limit=${HISTORY_LIMIT}`);
  const items = page.status === 200 ? (JSON.parse(page.body) as { items: unknown[] }).items.length : -1;
  if (items !== HISTORY_LIMIT) throw new Error(`Setup: the history page answered ${page.status} with ${items} items: ${page.body.slice(0, 300)}`);
  const sample = await call(`${baton.url}/v1/checkpoints/${readIds[0]}`);
  if (sample.status !== 200 || versionOf(sample.etag) === undefined) throw new Error(`Setup: a read answered ${sample.status}, ETag ${sample.etag}`);
  // Give the bare GET route the same response payload: a real checkpoint as Baton returns it.
  const seeded = await call(`${bare.url}/v1/checkpoints`, { method: 'POST', body: sample.body });
  if (seeded.status !== 201) throw new Error(`Setup: the bare server answered ${seeded.status}`);
  const prepSeconds = (performance.now() - prepStarted) / 1000;
  const prepared = GET_CHECKPOINTS + PATCH_CHECKPOINTS + HISTORY_TASKS * HISTORY_PER_TASK;
  console.log(
    `setup: ${prepared} checkpoints in ${prepSeconds.toFixed(1)} s (${PREP_CONCURRENCY} concurrent fetches); ` +
      `GET payload ${Buffer.byteLength(sample.body)} B, history page ${Buffer.byteLength(page.body)} B`,
  );
  sampleMemory();

  // --- Closed loop.
  const rows: [string, string, ClosedFigures][] = [];
  const step = (name: string): void => {
    process.stderr.write(`  running ${name}…\n`);
  };
  step('create');
  const create = await closedLoop(baton, postRequests);
  rows.push(['create', 'baton', create]);
  sampleMemory();
  step('bare POST');
  const barePost = await closedLoop(bare, postRequests);
  rows.push(['POST', 'bare', barePost]);
  step('get');
  const get = await closedLoop(baton, getRequests(readIds));
  rows.push(['get', 'baton', get]);
  sampleMemory();
  step('bare GET');
  // Seed again: the bare POST run left its last body there.
  await call(`${bare.url}/v1/checkpoints`, { method: 'POST', body: sample.body });
  const bareGet = await closedLoop(bare, getRequests(readIds));
  rows.push(['GET', 'bare', bareGet]);
  step('patch');
  const patchScenario = new PatchScenario(baton.url, patchSlots);
  const patch = await closedLoop(
    baton,
    () => patchScenario.requests(),
    CONNECTIONS,
    () => patchScenario.resync(),
  );
  patch.extra = { ...patchScenario.counts };
  rows.push(['patch', 'baton', patch]);
  sampleMemory();
  step('history(100)');
  const history = await closedLoop(baton, historyRequests);
  rows.push([`history(${HISTORY_LIMIT})`, 'baton', history]);
  step('history(100) at 1 connection');
  const history1 = await closedLoop(baton, historyRequests, 1);
  rows.push([`history(${HISTORY_LIMIT})`, 'baton', history1]);
  sampleMemory();

  // --- Open loop.
  step(`open loop against bare (${OPEN_CREATES} POST/s + ${OPEN_READS} GET/s)`);
  await call(`${bare.url}/v1/checkpoints`, { method: 'POST', body: sample.body });
  // Bare first: its POSTs replace the GET payload with create bodies of about the same size.
  const openBare = await openLoopMeasured(bare, readIds);
  step(`open loop against baton (${OPEN_CREATES} creates/s + ${OPEN_READS} reads/s)`);
  const openBaton = await openLoopMeasured(baton, readIds);
  sampleMemory();

  const memoryEnd = memoryOf(baton.child.pid);
  const bareMemory = memoryOf(bare.child.pid);
  const warnings = baton.lines.slice();

  // --- Figures.
  const ratios = {
    createRateVsBarePost: create.okPerSec / barePost.okPerSec,
    createP99VsBarePostP99: create.p99Ms / barePost.p99Ms,
    createCpuPerReqVsBarePost: create.cpu.serverUsPerReq / barePost.cpu.serverUsPerReq,
    getRateVsBareGet: get.okPerSec / bareGet.okPerSec,
    getP99VsBareGetP99: get.p99Ms / bareGet.p99Ms,
    historyP50Ms: history.p50Ms,
    historyP50MsOneConnection: history1.p50Ms,
    openCreateP99VsBare: openBaton.streams.create!.p99Ms / openBare.streams.create!.p99Ms,
    openReadP99VsBare: openBaton.streams.read!.p99Ms / openBare.streams.read!.p99Ms,
    openAllP99VsBare: openBaton.all.p99Ms / openBare.all.p99Ms,
  };
  const peakRss = Math.max(...memorySamples.map((m) => m.rssMB), memoryEnd?.rssMB ?? 0);

  console.log('');
  console.log(closedTable(rows));
  console.log(
    `patch: ${patch.extra.ok200} x 200, ${patch.extra.conflict412} x 412, ${patch.extra.other} other, ` +
      `${patch.extra.resyncs} re-reads, ${patch.extra.poolEmpty} pool-empty (a 412 here means a lost or wrong version)`,
  );
  console.log('');
  console.log(openTable([['bare', openBare], ['baton', openBaton]]));
  console.log(
    `open loop: send lag behind schedule p50/p99/max bare ${fixed(openBare.schedulerLag.p50Ms, 2)}/${fixed(openBare.schedulerLag.p99Ms, 2)}/${fixed(openBare.schedulerLag.maxMs, 1)} ms, ` +
      `baton ${fixed(openBaton.schedulerLag.p50Ms, 2)}/${fixed(openBaton.schedulerLag.p99Ms, 2)}/${fixed(openBaton.schedulerLag.maxMs, 1)} ms; ` +
      `max in flight bare ${openBare.maxInFlight}, baton ${openBaton.maxInFlight}`,
  );
  console.log('');
  console.log('ratios (DESIGN §9)');
  console.log(`  create rate / bare POST rate        ${pct(ratios.createRateVsBarePost).padStart(9)}   target >= 40 %: ${verdict(ratios.createRateVsBarePost >= 0.4)}`);
  console.log(`  create p99 / bare POST p99          ${times(ratios.createP99VsBarePostP99).padStart(9)}`);
  console.log(
    `  create / bare POST server CPU/req   ${times(ratios.createCpuPerReqVsBarePost).padStart(9)}   (${fixed(create.cpu.serverUsPerReq, 0)} vs ${fixed(barePost.cpu.serverUsPerReq, 0)} us, all threads)`,
  );
  console.log(`  get rate / bare GET rate            ${pct(ratios.getRateVsBareGet).padStart(9)}`);
  console.log(`  get p99 / bare GET p99              ${times(ratios.getP99VsBareGetP99).padStart(9)}`);
  console.log(
    `  history(${HISTORY_LIMIT}) p50, 1 connection       ${`${fixed(history1.p50Ms, 2)} ms`.padStart(9)}   target < 5 ms: ${verdict(history1.p50Ms < 5)}`,
  );
  console.log(
    `  history(${HISTORY_LIMIT}) p50, ${CONNECTIONS} connections    ${`${fixed(history.p50Ms, 2)} ms`.padStart(9)}   target < 5 ms: ${verdict(history.p50Ms < 5)} (includes queueing behind ${CONNECTIONS - 1} others)`,
  );
  console.log(`  open-loop create p99 / bare p99     ${times(ratios.openCreateP99VsBare).padStart(9)}   target <= 1.5x: ${verdict(ratios.openCreateP99VsBare <= 1.5)}`);
  console.log(`  open-loop read p99 / bare p99       ${times(ratios.openReadP99VsBare).padStart(9)}   target <= 1.5x: ${verdict(ratios.openReadP99VsBare <= 1.5)}`);
  console.log(`  open-loop all p99 / bare p99        ${times(ratios.openAllP99VsBare).padStart(9)}   target <= 1.5x: ${verdict(ratios.openAllP99VsBare <= 1.5)}`);
  console.log(
    `memory: baton rss at end ${memoryEnd?.rssMB ?? '-'} MB (anon ${memoryEnd?.anonMB ?? '-'} MB, file-backed incl. LMDB map ${memoryEnd?.fileMB ?? '-'} MB), ` +
      `highest sampled ${peakRss} MB, peak (VmHWM) ${memoryEnd?.peakRssMB ?? '-'} MB ` +
      `(target <= 250 MB: ${verdict((memoryEnd?.peakRssMB ?? Infinity) <= 250)}); bare rss ${bareMemory?.rssMB ?? '-'} MB`,
  );
  if (warnings.length > 0) {
    console.log(`baton logged ${warnings.length} warning/error line(s) under load; first ones:`);
    for (const line of warnings.slice(0, 5)) console.log(`  ${line.slice(0, 400)}`);
  } else {
    console.log('baton logged no warnings or errors under load');
  }

  const result = {
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    connections: CONNECTIONS,
    openTasks: OPEN_TASKS,
    createBodyBytes: sampleBytes,
    getPayloadBytes: Buffer.byteLength(sample.body),
    historyPageBytes: Buffer.byteLength(page.body),
    bodyLimit,
    rateLimitPerMinute: RATE_LIMIT,
    node: process.version,
    cpus: cpus().length,
    tmpdir: tmpdir(),
    setup: { checkpoints: prepared, seconds: round(prepSeconds, 2) },
    closed: { create, barePost, get, bareGet, patch, history, historyOneConnection: history1 },
    open: { ratePerSec: { creates: OPEN_CREATES, reads: OPEN_READS }, bare: openBare, baton: openBaton },
    ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, round(v, 4)])),
    memory: { baton: memoryEnd, batonHighestSampledRssMB: peakRss, bare: bareMemory },
    batonWarnings: warnings.length,
  };

  await cleanup();
  if (CPU_PROF_DIR) console.log(`cpu profile of the baton server written under ${CPU_PROF_DIR}`);
  console.log(`RESULT ${JSON.stringify(result)}`);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    await cleanup();
    // Nothing should keep the loop alive; make sure.
    setTimeout(() => process.exit(), 2_000).unref();
  });
