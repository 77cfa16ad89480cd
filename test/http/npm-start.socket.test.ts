/**
 * `npm start` as a user runs it: npm starts a shell that starts the server.
 * Stopping npm by its pid must stop the server too, so that nothing is left
 * holding the port (the server notices that its parent is gone).
 */
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TOKENS } from '../support/app.js';
import { exited, logLines, removeDir, tempDataDir, until } from '../support/crash-server.js';
import { npmStart } from '../support/npm-start.js';

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npm start', () => {
  let npm: ChildProcess | undefined;
  let serverPid: number | undefined;
  let dir: string | undefined;

  afterEach(() => {
    npm?.kill('SIGKILL');
    // Whatever the test found, no server outlives it.
    if (serverPid !== undefined) {
      try {
        process.kill(serverPid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    removeDir(dir);
  });

  it('stops the server when npm is stopped by its pid, freeing the port', async () => {
    dir = tempDataDir('baton-npm-start-');
    const started = await npmStart({ BATON_DATA_DIR: dir, BATON_TOKENS: `writer:${TOKENS.writer}` }, (child) => (npm = child));
    const { npm: child, port, output } = started;
    serverPid = started.serverPid;
    expect(serverPid).not.toBe(child.pid);
    expect(await listening(port)).toBe(true);

    child.kill('SIGTERM');
    expect(await exited(child, 10_000), 'npm exits on SIGTERM').toBe(true);
    // The server's output still reaches this pipe: it logs its graceful shutdown before it exits.
    await until(() => logLines(output()).some((line) => line.msg === 'shut down'), `the server shuts down: ${output()}`, 5_000);
    expect(await listening(port), 'something still holds the port').toBe(false);
  }, 90_000);
});
