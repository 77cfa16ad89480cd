/**
 * kill -9 under a lone agent (DESIGN §1: "acknowledged writes survive kill
 * -9"): one client writes checkpoints one at a time on one keep-alive
 * connection, as an agent alone or a framework's saver does, so that its
 * commits run on the server's event loop (`Store.commitInline`). The
 * process is killed with SIGKILL while it writes, restarted on the same
 * directory, and every create it acknowledged is there with the hash it
 * answered, in the task's history, under an audit chain that verifies.
 */
import http from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';
import { checkpointBody } from '../../support/app.js';
import { exited, removeDir, startBaton, stopBaton, tempDataDir, WRITER } from '../../support/crash-server.js';

const TASK = 'lone-crash';
const TARGET_ACKS = 200;

const children: ChildProcess[] = [];
let dir: string | undefined;
afterAll(async () => {
  for (const child of children) await stopBaton(child);
  removeDir(dir);
});

function post(agent: http.Agent, base: string, body: string): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = http.request(`${base}/v1/checkpoints`, { method: 'POST', agent, headers: { ...WRITER, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', () => resolve(undefined));
    });
    // The server was killed under this request: its outcome is unknown and it is not counted.
    req.on('error', () => resolve(undefined));
    req.end(body);
  });
}

it('keeps every create a lone client was answered for across kill -9', { timeout: 120_000 }, async () => {
  dir = tempDataDir('baton-lone-crash-');
  const first = await startBaton(dir);
  children.push(first.child);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const acked = new Map<string, string>();
  const refused: string[] = [];
  let stop = false;
  const loop = (async () => {
    for (let i = 0; !stop; i++) {
      const answer = await post(agent, first.url, JSON.stringify(checkpointBody(TASK, { iteration: i, labels: { step: i } })));
      if (answer === undefined) return;
      if (answer.status !== 201) {
        refused.push(`${answer.status} ${answer.body}`);
        continue;
      }
      // The body may be cut off by the kill after the status line: then the write is not counted.
      try {
        const body = JSON.parse(answer.body) as { id: string; compliance: { hash: string } };
        acked.set(body.id, body.compliance.hash);
      } catch {
        return;
      }
    }
  })();
  while (acked.size < TARGET_ACKS && refused.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  first.child.kill('SIGKILL');
  expect(await exited(first.child, 10_000), 'the server exits on SIGKILL').toBe(true);
  stop = true;
  await loop;
  agent.destroy();
  expect(refused).toEqual([]);

  const second = await startBaton(dir);
  children.push(second.child);
  const lost: string[] = [];
  for (const [id, hash] of acked) {
    const res = await fetch(`${second.url}/v1/checkpoints/${id}`, { headers: WRITER });
    const body = (await res.json()) as { compliance?: { hash: string } };
    if (res.status !== 200 || body.compliance?.hash !== hash) lost.push(`${id} → ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  }
  expect(lost, `${acked.size} acknowledged creates`).toEqual([]);

  const listed = new Set<string>();
  for (let cursor: string | undefined, page = 0; page < 20; page++) {
    const res = await fetch(`${second.url}/v1/tasks/${TASK}/checkpoints?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: WRITER });
    const body = (await res.json()) as { items: { id: string }[]; nextCursor?: string };
    for (const item of body.items) listed.add(item.id);
    cursor = body.nextCursor;
    if (!cursor) break;
  }
  for (const id of acked.keys()) expect(listed.has(id), id).toBe(true);
  const verify = await fetch(`${second.url}/v1/tasks/${TASK}/audit/verify`, { headers: WRITER });
  expect(await verify.json()).toMatchObject({ ok: true });
});
