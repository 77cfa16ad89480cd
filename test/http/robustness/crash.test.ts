/**
 * kill -9 under write load (DESIGN §1: "acknowledged writes survive kill -9").
 *
 * The real server runs on a temporary data directory; eight client loops
 * create checkpoints (and patch some) over HTTP, recording every write the
 * server acknowledged. The process is killed with SIGKILL while requests
 * are in flight, restarted on the same directory, and every acknowledged
 * write must be there: readable, at its version or later, with the same
 * hash at that version, and every task's audit chain must verify.
 *
 * How many load requests the kill catches depends on the machine's timing,
 * so that number is only reported. That the kill lands while the server is
 * serving a request is made certain instead: one create is held open (routed
 * by the server, half its body still to come) across the kill.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointBody } from '../../support/app.js';
import { exited, heldCreate, removeDir, routed, startBaton, stopBaton, tempDataDir, until, WRITER } from '../../support/crash-server.js';

const LOOPS = 8;
const TASKS = 4;
const HELD_TASK = 'crash-held';
const TARGET_ACKS = 300;
const LOAD_MS = 2_000;
const REQUEST_TIMEOUT_MS = 5_000;

interface Ack {
  id: string;
  taskId: string;
  version: number;
  hash: string;
}

/** Runs `fn` over `items` with at most `width` at a time. */
async function inBatches<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

describe('kill -9 during a write load', () => {
  const children: ChildProcess[] = [];
  let dir: string | undefined;

  afterAll(async () => {
    for (const child of children) await stopBaton(child);
    removeDir(dir);
  });

  it('every acknowledged write survives and every audit chain verifies after a restart', { timeout: 120_000 }, async () => {
    dir = tempDataDir('baton-crash-');
    // At debug the server logs Fastify's "incoming request" line, which says it routed the held request.
    const first = await startBaton(dir, { LOG_LEVEL: 'debug' });
    children.push(first.child);

    // Acknowledged writes, by checkpoint id: the highest acknowledged version and its hash.
    const acked = new Map<string, Ack>();
    // Every acknowledged (id, version) with its hash, to read each version back.
    const versions: Ack[] = [];
    let acks = 0;
    let stop = false;
    let inFlight = 0;
    let inFlightAtKill = 0;
    const clientErrors: string[] = [];

    const record = (ack: Ack): void => {
      versions.push(ack);
      const known = acked.get(ack.id);
      if (!known || known.version < ack.version) acked.set(ack.id, ack);
      acks += 1;
    };

    const send = async (url: string, init: RequestInit): Promise<Response | undefined> => {
      inFlight += 1;
      try {
        return await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      } catch {
        // The server was killed under this request: its outcome is unknown and it is not counted.
        return undefined;
      } finally {
        inFlight -= 1;
      }
    };

    const loop = async (n: number): Promise<void> => {
      let last: Ack | undefined;
      for (let i = 0; !stop; i++) {
        const taskId = `crash-task-${(n + i) % TASKS}`;
        if (last && i % 3 === 2) {
          const res = await send(`${first.url}/v1/checkpoints/${last.id}`, {
            method: 'PATCH',
            headers: { ...WRITER, 'content-type': 'application/merge-patch+json', 'if-match': `"${last.version}"` },
            body: JSON.stringify({ executionState: { currentFocus: `loop ${n} step ${i}` }, labels: { step: i } }),
          });
          if (!res) return;
          if (res.status === 200) {
            const body = (await res.json().catch(() => undefined)) as { version: number; compliance: { hash: string } } | undefined;
            if (!body) return;
            last = { ...last, version: body.version, hash: body.compliance.hash };
            record(last);
          } else {
            clientErrors.push(`PATCH → ${res.status} ${await res.text().catch(() => '')}`);
          }
          continue;
        }
        const res = await send(`${first.url}/v1/checkpoints`, {
          method: 'POST',
          headers: { ...WRITER, 'content-type': 'application/json' },
          body: JSON.stringify(checkpointBody(taskId, { agentId: `loop-${n}`, iteration: i, labels: { loop: n, step: i } })),
        });
        if (!res) return;
        if (res.status === 201) {
          // The body may be cut off by the kill after the status line: then the write is not counted.
          const body = (await res.json().catch(() => undefined)) as { id: string; version: number; compliance: { hash: string } } | undefined;
          if (!body) return;
          last = { id: body.id, taskId, version: body.version, hash: body.compliance.hash };
          record(last);
        } else {
          clientErrors.push(`POST → ${res.status} ${await res.text().catch(() => '')}`);
        }
      }
    };

    const started = Date.now();
    const loops = Array.from({ length: LOOPS }, (_, n) => loop(n));
    while (acks < TARGET_ACKS && Date.now() - started < LOAD_MS) await new Promise((resolve) => setTimeout(resolve, 5));
    const loadInFlightAtKill = inFlight;
    const held = heldCreate(first.url, 'crash-held', JSON.stringify(checkpointBody(HELD_TASK)));
    // Counted as in flight for good: it cannot finish before the kill, since its body is never completed.
    inFlight += 1;
    const heldOutcome = held.response.then(
      (res) => `answered ${res.status}`,
      () => 'no answer',
    );
    await until(() => routed(first, 'crash-held'), 'the server has routed the held request');
    inFlightAtKill = inFlight;
    first.child.kill('SIGKILL');
    expect(await exited(first.child, 10_000), 'the server exits on SIGKILL').toBe(true);
    stop = true;
    await Promise.all(loops);

    expect(clientErrors, 'no write was refused during the load').toEqual([]);
    expect(acks, 'writes were acknowledged before the kill').toBeGreaterThan(50);
    expect(first.child.signalCode).toBe('SIGKILL');
    // The kill landed while requests were being served: certainly the held one, which never got an answer.
    expect(inFlightAtKill, 'requests in flight at the kill').toBeGreaterThan(0);
    expect(await heldOutcome, 'the request held open across the kill').toBe('no answer');

    const second = await startBaton(dir);
    children.push(second.child);

    const lost: string[] = [];
    await inBatches([...acked.values()], 16, async (ack) => {
      const res = await fetch(`${second.url}/v1/checkpoints/${ack.id}`, { headers: WRITER, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      if (res.status !== 200) {
        lost.push(`${ack.id} (acknowledged at version ${ack.version}) → ${res.status} ${await res.text()}`);
        return;
      }
      const body = (await res.json()) as { version: number; taskId: string; compliance: { hash: string } };
      if (body.version < ack.version) lost.push(`${ack.id}: version ${body.version} < acknowledged ${ack.version}`);
      if (body.version === ack.version && body.compliance.hash !== ack.hash) lost.push(`${ack.id}: hash ${body.compliance.hash} ≠ acknowledged ${ack.hash}`);
      if (body.taskId !== ack.taskId) lost.push(`${ack.id}: task ${body.taskId} ≠ ${ack.taskId}`);
    });
    // Each acknowledged version, current or earlier, reads back with its acknowledged hash.
    await inBatches(versions, 16, async (ack) => {
      const res = await fetch(`${second.url}/v1/checkpoints/${ack.id}?version=${ack.version}`, { headers: WRITER, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      if (res.status !== 200) {
        lost.push(`${ack.id} version ${ack.version} → ${res.status} ${await res.text()}`);
        return;
      }
      const body = (await res.json()) as { version: number; compliance: { hash: string } };
      if (body.version !== ack.version || body.compliance.hash !== ack.hash) {
        lost.push(`${ack.id} version ${ack.version}: read version ${body.version} hash ${body.compliance.hash}, acknowledged hash ${ack.hash}`);
      }
    });
    expect(lost, `${acked.size} acknowledged checkpoints, ${versions.length} acknowledged versions, ${loadInFlightAtKill} load requests in flight just before the kill`).toEqual([]);

    // The request cut off mid-body left nothing behind: its task does not exist.
    const heldHistory = await fetch(`${second.url}/v1/tasks/${HELD_TASK}/checkpoints`, { headers: WRITER, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    expect(heldHistory.status).toBe(404);
    expect(await heldHistory.json()).toMatchObject({ code: 'not_found' });

    // Every task's history lists each of its acknowledged checkpoints, and its audit chain verifies.
    const tasks = [...new Set([...acked.values()].map((a) => a.taskId))].sort();
    expect(tasks.length).toBeGreaterThan(0);
    for (const taskId of tasks) {
      const verify = await fetch(`${second.url}/v1/tasks/${taskId}/audit/verify`, { headers: WRITER, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      expect(verify.status, taskId).toBe(200);
      expect(await verify.json(), taskId).toMatchObject({ ok: true });

      const listed = new Set<string>();
      let cursor: string | undefined;
      for (let page = 0; page < 100; page++) {
        const url = `${second.url}/v1/tasks/${taskId}/checkpoints?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await fetch(url, { headers: WRITER, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        expect(res.status, url).toBe(200);
        const body = (await res.json()) as { items: { id: string }[]; nextCursor?: string };
        for (const item of body.items) listed.add(item.id);
        cursor = body.nextCursor;
        if (!cursor) break;
      }
      const missing = [...acked.values()].filter((a) => a.taskId === taskId && !listed.has(a.id)).map((a) => a.id);
      expect(missing, `${taskId}: acknowledged checkpoints missing from the history`).toEqual([]);
    }

    // The restarted server still takes writes on the same tasks.
    const after = await fetch(`${second.url}/v1/checkpoints`, {
      method: 'POST',
      headers: { ...WRITER, 'content-type': 'application/json' },
      body: JSON.stringify(checkpointBody(tasks[0]!)),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    expect(after.status).toBe(201);
    const verify = await fetch(`${second.url}/v1/tasks/${tasks[0]!}/audit/verify`, { headers: WRITER, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    expect(await verify.json()).toMatchObject({ ok: true });
  });
});
