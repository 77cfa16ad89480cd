/**
 * The HTTP benchmark's servers, each a child process with the runtime Baton
 * has under `npm start`: plain JavaScript compiled by esbuild (Baton's
 * `dist/main.js`; a TypeScript server such as the bare and floor routes of
 * `bare-server.ts` compiled into `dist/loadtest/`), run by `node` with the
 * flags of the `start` script (`--max-semi-space-size=32
 * --incremental-marking-soft-trigger=70`), no TypeScript loader. Ratios
 * against a reference are only fair when both run alike.
 * Also: finding the port a server listens on, checking it is still alive
 * after a run, and stopping them all (SIGTERM, then SIGKILL after a grace
 * period) at the end, on an error or on a signal.
 *
 * @module
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { onInterrupt, runMain, type TempDirs } from './cleanup.js';
import { listeningPorts } from './proc.js';

/** The repository root: servers run from there, as `npm start` does, and scripts are named relative to it. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The service as `npm start` runs it: compiled by `scripts/build.mjs` (its `prestart`), no TypeScript loader. */
export const BATON_MAIN = 'dist/main.js';

/** The Node flags `npm start` gives the service (its `start` script: `node <flags> dist/main.js`), so the benchmarks run it the same way. */
function startFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { scripts: Record<string, string> };
  const words = scripts.start!.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== BATON_MAIN) throw new Error(`package.json's start script is not "node [flags] ${BATON_MAIN}": ${scripts.start}`);
  return words.slice(1, -1);
}

let built = false;

/** Compiles the service once per benchmark run, as `npm start` does before it starts. */
function buildOnce(): void {
  if (built) return;
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
  built = true;
}

/**
 * Compiles a TypeScript server script to `dist/loadtest/<name>.js` as
 * `scripts/build.mjs` compiles the service (esbuild, ESM, node20), with the
 * modules of ours it imports bundled in (their `dist/` layout is Baton's, not
 * the script's) and packages loaded from node_modules. After the service's
 * build, which points `dist` at a build directory of its own.
 */
async function compileScript(script: string): Promise<string> {
  buildOnce();
  const out = join('dist', 'loadtest', basename(script).replace(/\.ts$/, '.js'));
  await build({ entryPoints: [join(ROOT, script)], outfile: join(ROOT, out), bundle: true, packages: 'external', format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
  return out;
}

/** Every child started and not yet stopped, so that no exit path leaves one running. */
const children = new Set<ChildProcess>();

export interface Server {
  name: string;
  child: ChildProcess;
  url: string;
  host: string;
  port: number;
  /** The server's output (bounded), for diagnostics. */
  output: () => string;
  /** Lines of the server's output but its JSON log lines below `warn`: every one is a warning, an error, or not a log line. */
  lines: string[];
}

/** A pino line below `warn` (level 40): at LOG_LEVEL=info a server logs such lines under load, and they are no warning. */
const belowWarn = (line: string): boolean => {
  const level = /^\{"level":(\d+)/.exec(line);
  return level !== null && Number(level[1]) < 40;
};

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

/**
 * Starts a server with `node <start flags> <script>` (a TypeScript script
 * compiled first) and finds where it listens: from its "Server listening at"
 * line when it logs one (it does not at LOG_LEVEL=warn), else from the
 * sockets it listens on, probing `probePath`.
 */
export async function startServer(name: string, script: string, env: Record<string, string>, probePath: string, nodeArgs: string[] = [], scriptArgs: string[] = []): Promise<Server> {
  if (script === BATON_MAIN) buildOnce();
  const runnable = script.endsWith('.ts') ? await compileScript(script) : script;
  // Every server gets the V8 flags Baton runs with: the young generation's size changes throughput and pauses.
  const child = spawn(process.execPath, [...startFlags(), ...nodeArgs, runnable, ...scriptArgs], {
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
    for (const line of parts) if (line.trim() !== '' && lines.length < 1000 && !belowWarn(line)) lines.push(line);
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

/** Throws, with the end of its output, if `server` has exited: the figures of a run it did not survive mean nothing. */
export function assertAlive(server: Server): void {
  if (exited(server.child)) {
    throw new Error(`${server.name} exited (${server.child.exitCode ?? server.child.signalCode}) during the run:\n${server.output().slice(-4000)}`);
  }
}

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

/** Stops every server started: SIGTERM, then SIGKILL after 5 s. */
export async function stopServers(): Promise<void> {
  await Promise.all([...children].map((child) => stopChild(child)));
}

/** SIGKILLs every server still running; synchronous, for a process 'exit' handler. */
export function killServers(): void {
  for (const child of children) if (!exited(child)) child.kill('SIGKILL');
}

/**
 * Runs a benchmark that starts servers in `dirs` (`runMain`): on SIGINT or
 * SIGTERM they are killed and the dirs removed; at the end, whatever
 * happened, they are stopped and the dirs removed.
 */
export function runBench(main: () => Promise<void>, dirs: TempDirs): void {
  onInterrupt(async () => {
    killServers();
    dirs.removeAll();
  });
  runMain(main, async () => {
    await stopServers();
    dirs.removeAll();
  });
}
