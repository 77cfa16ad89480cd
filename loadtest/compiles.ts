/**
 * What V8's optimizing compiler does in the steady state: Baton under
 * `--trace-opt --print-opt-source` (every isolate: the event loop, the merge
 * and compression threads) through `BENCH_SECONDS` of closed-loop creates at
 * `BENCH_CONNECTIONS`, after the usual warm-up. Prints the compilations that
 * finished in each second of the measured loop with their compile time, and
 * the functions compiled more than once there, by file, name and position.
 *
 *   npx tsx loadtest/compiles.ts
 *
 * Warm code compiles nothing: a function compiled again and again is one
 * whose optimized code was dropped, most often a callback made afresh at
 * each call of a function that runs now and then (the merge thread's
 * per-batch callbacks, before they became module functions, were optimized
 * ~30 times a second, ~80 µs of the compiler's threads a create; see
 * `docs/performance.md`). The trace's own cost makes the rate slower than
 * `bench:http`'s. Prints figures only; asserts nothing.
 *
 * @module
 */
import { TempDirs } from './lib/cleanup.js';
import { CONNECTIONS, SECONDS, TOKEN } from './lib/http-config.js';
import { useBodies } from './lib/http-payloads.js';
import { closedLoop, postRequests } from './lib/http-scenarios.js';
import { BATON_MAIN, runBench, startServer, stopServers } from './lib/servers.js';

const tempDirs = new TempDirs('baton-compiles');

/** `[compile ms, file:name @position]` of each compilation whose trace lines `text` holds, in order. */
function compilations(text: string): Array<{ ms: number; where: string }> {
  // A worker's trace arrives in pieces between the event loop's lines: each bracketed event is put back together.
  const events = text.replace(/\n/g, '').split(/(?=\[|--- FUNCTION SOURCE)/);
  const found: Array<{ ms: number; where: string }> = [];
  let source = '';
  for (const event of events) {
    const head = /^--- FUNCTION SOURCE \((.*?)\) id\{\d+,-1\} start\{(\d+)\} ---/.exec(event);
    if (head) source = `${head[1]!.replace(/^file:\/\/\/.*?\/(dist\.[0-9a-f]+|node_modules)\//, '$1/').replace(/^dist\.[0-9a-f]+\//, '')} @${head[2]}`;
    const done = /^\[completed compiling .*? - took [\d.]+, ([\d.]+), [\d.]+ ms/.exec(event);
    if (done) found.push({ ms: Number(done[1]), where: source });
  }
  return found;
}

async function main(): Promise<void> {
  useBodies('evolving');
  const baton = await startServer(
    'baton',
    BATON_MAIN,
    { BATON_DATA_DIR: tempDirs.make('data'), BATON_TOKENS: `writer:${TOKEN}`, BATON_RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1' },
    '/readyz',
    ['--trace-opt', '--print-opt-source'],
  );
  // Each second's trace apart, from the start of the measured loop (closedLoop calls `before` ahead of its warm-up and again ahead of it).
  const seconds: string[] = [];
  let measuring = false;
  let startedAt = 0;
  let befores = 0;
  baton.child.stdout!.on('data', (chunk: Buffer) => {
    if (!measuring) return;
    const second = Math.floor((Date.now() - startedAt) / 1000);
    seconds[second] = (seconds[second] ?? '') + chunk.toString();
  });
  const run = await closedLoop(baton, postRequests, CONNECTIONS, async () => {
    if (++befores < 2) return;
    measuring = true;
    startedAt = Date.now();
  });
  measuring = false;
  await stopServers();
  console.log(`compiles under ${CONNECTIONS} connections of creates, ${SECONDS} s after the warm-up: ${run.okPerSec.toFixed(0)} creates/s under the trace`);
  const repeated = new Map<string, { count: number; ms: number }>();
  let total = 0;
  let totalMs = 0;
  for (const [second, text] of seconds.entries()) {
    if (second >= SECONDS) break;
    const found = compilations(text ?? '');
    const ms = found.reduce((sum, { ms: each }) => sum + each, 0);
    total += found.length;
    totalMs += ms;
    console.log(`  second ${String(second + 1).padStart(2)}: ${String(found.length).padStart(4)} compiles, ${ms.toFixed(1).padStart(7)} ms`);
    for (const { where, ms: each } of found) {
      const entry = repeated.get(where) ?? { count: 0, ms: 0 };
      entry.count += 1;
      entry.ms += each;
      repeated.set(where, entry);
    }
  }
  console.log(`  in all: ${total} compiles, ${totalMs.toFixed(0)} ms of compiling, ${((totalMs * 1000) / Math.max(1, run.okPerSec * SECONDS)).toFixed(1)} µs a create`);
  const again = [...repeated].filter(([, { count }]) => count > 1).sort((a, b) => b[1].ms - a[1].ms);
  console.log(`compiled more than once (${again.length} functions):`);
  for (const [where, { count, ms }] of again.slice(0, 30)) console.log(`  ${String(count).padStart(3)} x ${ms.toFixed(1).padStart(7)} ms  ${where || '(source not printed)'}`);
}

runBench(main, tempDirs);
