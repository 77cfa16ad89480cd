/**
 * The event loop first (`src/threads/priority.ts`): the server as `npm start`
 * runs it keeps every thread but its main one at `BATON_HELPER_NICE` or
 * below, the threads it starts later too, as `ps -L -o tid,nice,comm` shows.
 * The function itself runs in a child process of its own, so that the
 * threads of the test runner are left as they are.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointBody, TOKENS } from '../support/app.js';
import { exited, removeDir, tempDataDir, until, WRITER } from '../support/crash-server.js';
import { npmStart } from '../support/npm-start.js';

interface Thread {
  id: number;
  name: string;
  nice: number;
}

/** The threads of process `pid`, as `/proc` lists them; one that ended while listed is left out. */
function threadsOf(pid: number): Thread[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((id) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${id}/stat`, 'latin1');
      // The name is in parentheses and may hold spaces; the fields after it are: state (3), …, nice (19).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ id: Number(id), name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[16]) }];
    } catch {
      return [];
    }
  });
}

const linux = process.platform === 'linux';

describe.runIf(linux)('the event loop first, under npm start', () => {
  let npm: ChildProcess | undefined;
  let serverPid: number | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    npm?.kill('SIGTERM');
    if (npm !== undefined && !(await exited(npm, 10_000))) npm.kill('SIGKILL');
    // Whatever the test found, no server outlives it.
    if (serverPid !== undefined) {
      try {
        process.kill(serverPid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    npm = undefined;
    serverPid = undefined;
    removeDir(dir);
  });

  /**
   * Starts the server as `npm start` does (compiled, no TypeScript loader and
   * its threads) with `env`, writes checkpoints side by side so that its
   * merge and commit threads start, and answers the server's pid.
   */
  async function serverWithItsThreads(env: Record<string, string>): Promise<number> {
    dir = tempDataDir('baton-priority-');
    const started = await npmStart({ BATON_DATA_DIR: dir, BATON_TOKENS: `writer:${TOKENS.writer}`, BATON_INDEXER_DELAY_MS: '0', ...env }, (child) => (npm = child));
    const { serverPid: pid, url } = started;
    serverPid = pid;
    const creates = Array.from({ length: 8 }, (_, i) =>
      fetch(`${url}/v1/checkpoints`, { method: 'POST', headers: { ...WRITER, 'content-type': 'application/json' }, body: JSON.stringify(checkpointBody(`task-priority-${i}`)) }),
    );
    for (const response of await Promise.all(creates)) expect(response.status).toBe(201);
    await until(() => ['baton-merge', 'baton-commit'].every((name) => threadsOf(pid).some((thread) => thread.name === name)), 'the merge and commit threads start');
    return pid;
  }

  it('runs every thread but the event loop at nice 10 or below, the merge and commit threads started after it too', async () => {
    const pid = await serverWithItsThreads({});
    // A worker thread is listed as soon as it exists, and lowers itself as it starts.
    await until(() => threadsOf(pid).every((thread) => thread.id === pid || thread.nice >= 10), `every other thread is at nice 10 or below: ${JSON.stringify(threadsOf(pid))}`, 5_000);
    const threads = threadsOf(pid);
    expect(threads.find((thread) => thread.id === pid)?.nice).toBe(0);
    expect(threads.length).toBeGreaterThan(4);
  }, 90_000);

  it('leaves the threads at the process priority with BATON_HELPER_NICE=0, the merge thread at its own 5', async () => {
    const pid = await serverWithItsThreads({ BATON_HELPER_NICE: '0' });
    await until(() => threadsOf(pid).some((thread) => thread.name === 'baton-merge' && thread.nice === 5), 'the merge thread lowers itself to 5', 5_000);
    const threads = threadsOf(pid);
    expect(threads.find((thread) => thread.name === 'baton-commit')?.nice).toBe(0);
    // V8's and libuv's threads, started before any code of the server's.
    expect(threads.filter((thread) => thread.id !== pid && thread.nice === 0).length).toBeGreaterThanOrEqual(4);
  }, 90_000);
});

describe.runIf(linux)('lowerOtherThreads', () => {
  it('lowers every other thread to the nice value given, keeps one already lower, and leaves the main thread', async () => {
    // A worker that lowers itself to 15, then the walk at 7; the process reports each thread's nice value.
    const script = `
      import { Worker } from 'node:worker_threads';
      import { readdirSync, readFileSync } from 'node:fs';
      import { getPriority } from 'node:os';
      import { lowerOtherThreads } from './src/threads/priority.ts';
      const worker = new Worker("const { parentPort } = require('node:worker_threads'); const id = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()); require('node:os').setPriority(id, 15); parentPort.postMessage(id); setInterval(() => {}, 1000);", { eval: true, execArgv: [] });
      const workerId = await new Promise((resolve) => worker.once('message', resolve));
      const lowered = lowerOtherThreads(7);
      const nice = Object.fromEntries(readdirSync('/proc/self/task').map((id) => [id, getPriority(Number(id))]));
      console.log(JSON.stringify({ pid: process.pid, workerId, lowered, nice, again: lowerOtherThreads(7) }));
      process.exit(0);
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd() });
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as { pid: number; workerId: number; lowered: number; nice: Record<string, number>; again: number };
    const others = Object.entries(report.nice).filter(([id]) => Number(id) !== report.pid && Number(id) !== report.workerId);
    expect(report.nice[report.pid]).toBe(0);
    expect(report.nice[report.workerId]).toBe(15);
    expect(others.length).toBeGreaterThan(0);
    for (const [, nice] of others) expect(nice).toBe(7);
    expect(report.lowered).toBe(others.length);
    // Made again, the walk finds nothing left to lower.
    expect(report.again).toBe(0);
  });
});
