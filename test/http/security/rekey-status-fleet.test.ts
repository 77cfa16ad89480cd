/**
 * The re-seal pass is the fleet's (DESIGN §10, issue 38): two instances over
 * one store answer the same `GET /v1/admin/rekey` while a pass runs and after
 * it ends, naming the instance that runs it; a start on another instance
 * while it runs, or on both at once, leaves one pass; a pass whose instance
 * stopped refreshing it is reported `interrupted`, never `running` for
 * ever, and the next start takes it over. Instance A's store is slowed
 * (fault injection) so that its pass runs long enough to be looked at.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { configSchema } from '../../../src/config.js';
import { writeRekeyPass, type RekeyPassRecord } from '../../../src/service/repository/repository.js';
import { LmdbStore } from '../../../src/store/lmdb.js';
import { auth, checkpointBody, TOKENS } from '../../support/app.js';

interface Status {
  state: string;
  instanceId?: string;
  startedAt?: string;
  finishedAt?: string;
  resealed: number;
  error?: string;
}

const dir = mkdtempSync(join(tmpdir(), 'baton-rekey-status-'));
const k1 = `k1:${randomBytes(32).toString('base64')}`;
const k2 = `k2:${randomBytes(32).toString('base64')}`;
let store: LmdbStore;
let a: FastifyInstance;
let b: FastifyInstance;

async function instance(name: string, lines: string[]): Promise<FastifyInstance> {
  writeFileSync(join(dir, `keys-${name}`), `${lines.join('\n')}\n`);
  const config = configSchema.parse({
    dataDir: join(dir, 'data'),
    queueDir: join(dir, `queue-${name}`),
    tokens: `writer:${TOKENS.writer},admin:${TOKENS.admin}`,
    logLevel: 'silent',
    encryptionKeyFile: join(dir, `keys-${name}`),
  });
  return buildApp({ config, store, faultInjection: true });
}

async function slow(app: FastifyInstance, latencyMs: number): Promise<void> {
  const payload = latencyMs > 0 ? { store: 'slow', latencyMs } : { store: 'ok' };
  expect((await app.inject({ method: 'POST', url: '/v1/admin/faults', headers: auth('admin'), payload })).statusCode).toBe(200);
}

async function start(app: FastifyInstance): Promise<Status> {
  const res = await app.inject({ method: 'POST', url: '/v1/admin/rekey', headers: auth('admin'), payload: {} });
  expect(res.statusCode, res.body).toBe(202);
  return res.json() as Status;
}

async function status(app: FastifyInstance): Promise<Status> {
  const res = await app.inject({ method: 'GET', url: '/v1/admin/rekey', headers: auth('admin') });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Status;
}

async function finished(app: FastifyInstance): Promise<Status> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    const now = await status(app);
    if (now.state !== 'running') return now;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('The rekey pass did not finish in time.');
}

/**
 * A's answer read between two equal answers of B: the record only moves
 * forward (counts, heartbeat), so A read the same record and must say the
 * same. A batch committed in between makes B's two answers differ; look again.
 */
async function sameOnBoth(): Promise<Status> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const before = await status(b);
    const onA = await status(a);
    const after = await status(b);
    if (JSON.stringify(before) !== JSON.stringify(after)) continue;
    expect(onA).toEqual(before);
    return onA;
  }
  throw new Error('The pass moved between every pair of reads.');
}

function writeRecord(record: RekeyPassRecord): Promise<void> {
  return store.transact(async (tx) => writeRekeyPass(tx, record));
}

beforeAll(async () => {
  store = LmdbStore.open({ path: join(dir, 'data') });
  // Values sealed with k1, for the passes to re-seal with k2.
  const writer = await instance('w', [k1]);
  for (let i = 0; i < 20; i++) expect((await writer.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(`rekey-status-${i % 5}`) })).statusCode).toBe(201);
  await writer.close();
  a = await instance('a', [k1, k2]);
  b = await instance('b', [k1, k2]);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('answers the same pass on both instances while it runs and after it ends, and a start on the other instance starts no second pass', { timeout: 60_000 }, async () => {
  expect(await status(b)).toMatchObject({ state: 'idle' });
  await slow(a, 100);
  const started = await start(a);
  expect(started).toMatchObject({ state: 'running', instanceId: expect.any(String), startedAt: expect.any(String) });

  const running = await sameOnBoth();
  expect(running).toMatchObject({ state: 'running', instanceId: started.instanceId, startedAt: started.startedAt });
  // B is asked while A's pass runs: it answers A's pass and starts nothing.
  expect(await start(b)).toMatchObject({ state: 'running', instanceId: started.instanceId, startedAt: started.startedAt });

  const done = await finished(b);
  await slow(a, 0);
  expect(done).toMatchObject({ state: 'done', instanceId: started.instanceId, startedAt: started.startedAt, finishedAt: expect.any(String) });
  expect(done.resealed).toBeGreaterThan(0);
  expect(await status(a)).toEqual(done);
});

it('starts one pass when both instances are asked at once', { timeout: 60_000 }, async () => {
  await slow(a, 50);
  await slow(b, 50);
  const [onA, onB] = await Promise.all([start(a), start(b)]);
  expect(onA.state).toBe('running');
  expect(onB).toMatchObject({ state: 'running', instanceId: onA.instanceId, startedAt: onA.startedAt });
  const done = await finished(a);
  await slow(a, 0);
  await slow(b, 0);
  expect(done).toMatchObject({ state: 'done', instanceId: onA.instanceId, startedAt: onA.startedAt });
  expect(await status(b)).toEqual(done);
});

it('reports a pass whose instance stopped refreshing it as interrupted, and takes it over on the next start', { timeout: 60_000 }, async () => {
  const counts = { tenants: 1, scanned: 10, resealed: 4, reindexed: 0, retired: [] };
  // An instance that refreshed its pass a moment ago still runs it: nothing else starts.
  const now = new Date().toISOString();
  await writeRecord({ passId: 'elsewhere', state: 'running', instanceId: 'instance-elsewhere', startedAt: now, heartbeatAt: now, ...counts });
  expect(await start(b)).toMatchObject({ state: 'running', instanceId: 'instance-elsewhere', startedAt: now });

  // The same pass, its heartbeat an hour old: that instance was killed mid-pass.
  const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
  await writeRecord({ passId: 'elsewhere', state: 'running', instanceId: 'instance-elsewhere', startedAt: anHourAgo, heartbeatAt: anHourAgo, ...counts });
  for (const app of [a, b]) {
    expect(await status(app)).toMatchObject({ state: 'interrupted', instanceId: 'instance-elsewhere', startedAt: anHourAgo, resealed: 4, error: expect.stringContaining('stopped refreshing') });
  }

  const taken = await start(b);
  expect(taken).toMatchObject({ state: 'running' });
  expect(taken.instanceId).not.toBe('instance-elsewhere');
  const done = await finished(a);
  expect(done).toMatchObject({ state: 'done', instanceId: taken.instanceId, startedAt: taken.startedAt });
});

it('records a pass cut short by its instance closing as interrupted, on every instance', { timeout: 60_000 }, async () => {
  const c = await instance('c', [k1, k2]);
  await slow(c, 100);
  const started = await start(c);
  await c.close();
  expect(await status(b)).toMatchObject({ state: 'interrupted', instanceId: started.instanceId, error: expect.stringContaining('closed') });
  expect(await status(a)).toEqual(await status(b));
});
