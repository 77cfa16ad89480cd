/** SIGTERM under a write load: requests in flight finish, the process exits 0, and everything answered is there after a restart. */
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointBody } from '../../support/app.js';
import { removeDir, startBaton, tempDataDir, WRITER, type RunningServer } from '../../support/crash-server.js';

describe('graceful shutdown', () => {
  let server: RunningServer | undefined;
  let dir: string | undefined;
  afterEach(() => {
    server?.child.kill('SIGKILL');
    removeDir(dir);
  });

  it('finishes the requests in flight on SIGTERM, exits 0, and keeps every answered write', async () => {
    dir = tempDataDir('baton-term-');
    server = await startBaton(dir);
    const base = server.url;
    const answered: string[] = [];
    let stop = false;
    const loops = Array.from({ length: 8 }, async (_, loop) => {
      for (let n = 0; !stop && n < 10_000; n++) {
        try {
          const res = await fetch(`${base}/v1/checkpoints`, {
            method: 'POST',
            headers: { ...WRITER, 'content-type': 'application/json' },
            body: JSON.stringify(checkpointBody(`term-${loop}`)),
          });
          if (res.status === 201) answered.push(((await res.json()) as { id: string }).id);
          else await res.arrayBuffer();
        } catch {
          // The listener has closed: the shutdown is under way.
          return;
        }
      }
    });
    while (answered.length < 100) await new Promise((resolve) => setTimeout(resolve, 20));
    const exited = new Promise<number | null>((resolve) => server!.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    const stillRunning = new Promise<string>((resolve) => setTimeout(() => resolve('still running after 15 s'), 15_000));
    expect(await Promise.race([exited, stillRunning])).toBe(0);
    stop = true;
    await Promise.all(loops);

    server = await startBaton(dir);
    for (const id of answered) {
      const res = await fetch(`${server.url}/v1/checkpoints/${id}`, { headers: WRITER });
      expect(res.status, id).toBe(200);
    }
  }, 60_000);
});
