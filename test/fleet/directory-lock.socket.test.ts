/**
 * One directory, one process (DESIGN §10): a second Baton started on an LMDB
 * data directory, or on a write queue's directory, that a running one holds
 * refuses to start with one sentence naming the directory and the holder's
 * pid; once the holder is gone (even by `kill -9`) the directory is free.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exited, removeDir, startBaton, stopBaton, tempDataDir, type RunningServer } from '../support/crash-server.js';
import { startServer } from '../support/server.js';
import { TOKENS } from '../support/app.js';

let root: string | undefined;
const servers: RunningServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => stopBaton(server.child)));
  removeDir(root);
  root = undefined;
});

/** Starts a second process and waits for it to give up; its exit code and what it printed. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const second = startServer({ BATON_TOKENS: `writer:${TOKENS.writer}`, ...env });
  second.url.catch(() => undefined);
  expect(await exited(second.child, 30_000)).toBe(true);
  return { code: second.child.exitCode, output: second.output() };
}

describe('one directory, one process', () => {
  it('a second process on the same LMDB data directory refuses to start, naming the directory and the pid', async () => {
    root = tempDataDir('baton-lock-');
    const data = join(root, 'data');
    const first = await startBaton(data, { BATON_QUEUE_DIR: join(root, 'queue-a') });
    servers.push(first);
    const { code, output } = await refusedStart({ BATON_DATA_DIR: data, BATON_QUEUE_DIR: join(root, 'queue-b') });
    expect(code).toBe(1);
    expect(output.trim()).toBe(
      `The data directory ${realpathSync(data)} is in use by another Baton process (pid ${first.child.pid}); one directory belongs to one process: stop that process or give this one its own directory.`,
    );
    // The first one is unharmed.
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  });

  it('a second process on the same queue directory refuses to start, naming it and the pid', async () => {
    root = tempDataDir('baton-lock-');
    const queue = join(root, 'queue');
    const first = await startBaton(join(root, 'data-a'), { BATON_QUEUE_DIR: queue });
    servers.push(first);
    const { code, output } = await refusedStart({ BATON_DATA_DIR: join(root, 'data-b'), BATON_QUEUE_DIR: queue });
    expect(code).toBe(1);
    expect(output.trim()).toBe(
      `The write queue's directory ${realpathSync(queue)} is in use by another Baton process (pid ${first.child.pid}); one directory belongs to one process: stop that process or give this one its own directory.`,
    );
  });

  it('a directory whose holder was killed with kill -9 is free at once', async () => {
    root = tempDataDir('baton-lock-');
    mkdirSync(join(root, 'data'));
    const first = await startBaton(join(root, 'data'));
    first.child.kill('SIGKILL');
    await exited(first.child);
    const second = await startBaton(join(root, 'data'));
    servers.push(second);
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
  });
});
