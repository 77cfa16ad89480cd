/**
 * A full disk, for real (issue 46, `docs/reliability.md`): the data
 * directory, and separately the write queue's directory, on a small tmpfs
 * that fills up under the real server process. Writes are refused with a
 * problem naming the directory (507 `insufficient_storage`; 503
 * `queue_disk_full` with Retry-After for the queue), never `internal_error`,
 * a dropped connection or a dead process; reads keep working; `/readyz` says
 * why; writes resume without a restart once there is room; after a restart
 * every acknowledged write is there and every audit chain verifies.
 *
 * Needs root to mount the tmpfs; skipped with the reason otherwise.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointBody, TOKENS } from '../../support/app.js';
import { removeDir, startBaton, stopBaton, tempDataDir, WRITER } from '../../support/crash-server.js';
import { mountTmpfs, tmpfsSkipReason, type Tmpfs } from '../../support/tmpfs.js';

const skip = tmpfsSkipReason();
if (skip !== undefined) console.log(`full-disk tests skipped: ${skip}`);

const ADMIN = { authorization: `Bearer ${TOKENS.admin}` };
const WRITERS = 6;
/** About 4 KB a checkpoint, as an agent's checkpoint with a long continuation prompt is. */
const PROMPT = 'Continue with the parser; '.repeat(150);

let child: ChildProcess | undefined;
let mounted: Tmpfs | undefined;
let scratch: string | undefined;
afterEach(async () => {
  await stopBaton(child);
  child = undefined;
  mounted?.unmount();
  mounted = undefined;
  removeDir(scratch);
  scratch = undefined;
});

interface Answer {
  status: number;
  type: string;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...WRITER, ...(init.headers as Record<string, string>) } });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', retryAfter: res.headers.get('retry-after'), body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

function create(base: string, taskId: string, n: number): Promise<Answer> {
  return send(`${base}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(checkpointBody(taskId, { labels: { n: String(n) }, recovery: { continuationPrompt: `${PROMPT}${n}` } })) });
}

interface Acknowledged {
  id: string;
  hash: string;
}

/**
 * Writers create checkpoints side by side, one task each, until each has
 * been refused `refusals` times; every answer must be one of `accepted` or
 * the refusal. Returns what was acknowledged, by task, and the refusals.
 */
async function fillUp(base: string, prefix: string, accepted: number, refusal: number, writers = WRITERS, refusals = 3): Promise<{ acknowledged: Map<string, Acknowledged[]>; refused: Answer[] }> {
  const acknowledged = new Map<string, Acknowledged[]>();
  const refused: Answer[] = [];
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const taskId = `${prefix}-${w}`;
      const mine: Acknowledged[] = [];
      acknowledged.set(taskId, mine);
      let refusedHere = 0;
      for (let n = 0; refusedHere < refusals && n < 5_000; n++) {
        // A dropped connection or a dead process fails here, in fetch.
        const answer = await create(base, taskId, n);
        if (answer.status === accepted) {
          const checkpoint = (answer.body.checkpoint ?? answer.body) as { id: string; compliance: { hash: string } };
          mine.push({ id: checkpoint.id, hash: checkpoint.compliance.hash });
        } else {
          expect(answer.status, JSON.stringify(answer.body)).toBe(refusal);
          refused.push(answer);
          refusedHere++;
        }
      }
    }),
  );
  return { acknowledged, refused };
}

/** Every acknowledged checkpoint reads back with the hash its answer gave, each task's history holds them all, and its audit chain verifies. */
async function everyWriteThere(base: string, acknowledged: Map<string, Acknowledged[]>, extra = new Map<string, number>()): Promise<void> {
  for (const [taskId, ids] of acknowledged) {
    for (const { id, hash } of ids) {
      const read = await send(`${base}/v1/checkpoints/${id}`);
      expect(read.status, id).toBe(200);
      expect((read.body.compliance as { hash: string }).hash).toBe(hash);
    }
    const history = await send(`${base}/v1/tasks/${taskId}/checkpoints?limit=1000`);
    if (ids.length + (extra.get(taskId) ?? 0) === 0) {
      // Every write to this task was refused (the disk filled before its first): nothing of it may be there.
      expect(history.status, JSON.stringify(history.body)).toBe(404);
      continue;
    }
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    const stored = (history.body.items as { id: string }[]).map((c) => c.id);
    expect(stored).toEqual(expect.arrayContaining(ids.map((c) => c.id)));
    expect(stored).toHaveLength(ids.length + (extra.get(taskId) ?? 0));
    expect((await send(`${base}/v1/tasks/${taskId}/audit/verify`)).body).toEqual({ ok: true, entries: ids.length + (extra.get(taskId) ?? 0) });
  }
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(skip !== undefined)('a full disk', () => {
  it('refuses writes to a full data directory with 507 naming it, keeps reading, resumes once there is room, and loses nothing', { timeout: 180_000 }, async () => {
    mounted = mountTmpfs(48);
    scratch = tempDataDir('baton-full-queue-');
    const dataDir = join(mounted.dir, 'data');
    // Six writers of their own tasks and the indexer's merges beside them: the commit that fails for want of room is
    // followed by others already handed to LMDB, which land or fail in turn; those that read nothing of a failed one
    // are kept, and the store goes on without a restart (`LmdbStore.recover`).
    const env = { BATON_QUEUE_DIR: scratch };
    let server = await startBaton(dataDir, env);
    child = server.child;
    // Room for a few hundred checkpoints, so that the disk fills while writers are in flight.
    mounted.fill(1_500_000);

    const { acknowledged, refused } = await fillUp(server.url, 'full-data', 201, 507);
    expect([...acknowledged.values()].flat().length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.type).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({ status: 507, code: 'insufficient_storage' });
      expect(answer.body.detail).toContain(dataDir);
    }
    expect(server.child.exitCode).toBeNull();

    // Reads keep working; readiness says why writes are refused; the metric shows the disk.
    await everyWriteThere(server.url, acknowledged);
    const ready = await send(`${server.url}/readyz`);
    expect(ready).toMatchObject({ status: 200, body: { status: 'degraded', store: { status: 'full' }, disk: { data: { directory: dataDir, full: true } } } });
    expect(ready.body.reason).toContain(dataDir);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^disk_free_bytes\{directory="data"\} \d+$/m);
    expect(metrics).toMatch(/^disk_free_bytes\{directory="queue"\} \d+$/m);
    expect(metrics).toMatch(/^store_errors_total\{code="no_space"\} [1-9]/m);

    // Room again: the next write lands without a restart, and readiness is back.
    mounted.free();
    const resumed = await create(server.url, 'full-data-0', 9_999);
    expect(resumed.status).toBe(201);
    expect((await send(`${server.url}/readyz`)).body).toMatchObject({ status: 'ready', store: { status: 'ok' } });
    expect((await send(`${server.url}/readyz`)).body.reason).toBeUndefined();

    await stopBaton(server.child);
    server = await startBaton(dataDir, env);
    child = server.child;
    await everyWriteThere(server.url, acknowledged, new Map([['full-data-0', 1]]));
  });

  it('refuses writes the queue cannot hold on a full queue directory with 503, Retry-After and the directory, and loses nothing', { timeout: 180_000 }, async () => {
    mounted = mountTmpfs(48);
    scratch = tempDataDir('baton-full-data-');
    const queueDir = join(mounted.dir, 'queue');
    const env = { BATON_QUEUE_DIR: queueDir, BATON_QUEUE_REPLAY_MS: '50' };
    const flags = ['--enable-fault-injection'];
    let server = await startBaton(scratch, env, 60_000, flags);
    child = server.child;
    const faults = (store: 'ok' | 'unavailable') => send(`${server.url}/v1/admin/faults`, { method: 'POST', headers: ADMIN, body: JSON.stringify({ store }) });
    expect((await faults('unavailable')).status).toBe(200);
    mounted.fill(300_000);

    const { acknowledged, refused } = await fillUp(server.url, 'full-queue', 202, 503);
    expect([...acknowledged.values()].flat().length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.type).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({ status: 503, code: 'queue_disk_full' });
      expect(answer.body.detail).toContain(queueDir);
      expect(answer.retryAfter).toBe('1');
    }
    expect(server.child.exitCode).toBeNull();

    // Out of rotation while the queue cannot take writes, saying why; queued writes still read.
    const ready = await send(`${server.url}/readyz`);
    expect(ready).toMatchObject({ status: 503, body: { status: 'unavailable', queue: { accepting: false }, disk: { queue: { directory: queueDir, full: true } } } });
    expect(ready.body.reason).toContain(queueDir);
    // Whichever writer took the queue's last room: the first write acknowledged at all (writer 0 may have had none).
    const [first] = [...acknowledged.values()].flat();
    expect((await send(`${server.url}/v1/checkpoints/${first!.id}`)).status).toBe(200);

    // Room again: queued at once, without a restart; then the store comes back and the queue drains.
    mounted.free();
    expect((await send(`${server.url}/readyz`)).body).toMatchObject({ status: 'degraded', queue: { accepting: true } });
    const resumed = await create(server.url, 'full-queue-0', 9_999);
    expect(resumed.status).toBe(202);
    expect((await faults('ok')).status).toBe(200);
    await until(async () => ((await send(`${server.url}/readyz`)).body.queue as { depth: number }).depth === 0, 'the queue drained');

    await stopBaton(server.child);
    server = await startBaton(scratch, env, 60_000, flags);
    child = server.child;
    await everyWriteThere(server.url, acknowledged, new Map([['full-queue-0', 1]]));
  });
});
