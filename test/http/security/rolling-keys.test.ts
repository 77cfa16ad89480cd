/**
 * A rolling key rotation over one store (DESIGN §10): instance A has the new
 * key line (`k1`, then `k2`, which seals), instance B not yet (`k1` only).
 * What A writes, B cannot open: B answers 503 `encryption_key_missing`
 * naming `k2` — never 409 `checkpoint_corrupted`, never a 500 — and records
 * nothing (no audit entry, no `CHECKPOINT_CORRUPTED` event). Once B has the
 * line too, it reads the same checkpoint, verified.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { configSchema } from '../../../src/config.js';
import { LmdbStore } from '../../../src/store/lmdb.js';
import { auth, checkpointBody, TOKENS } from '../../support/app.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-rolling-'));
const k1 = `k1:${randomBytes(32).toString('base64')}`;
const k2 = `k2:${randomBytes(32).toString('base64')}`;
let store: LmdbStore;
const apps: FastifyInstance[] = [];

async function instance(name: string, lines: string[]): Promise<FastifyInstance> {
  writeFileSync(join(dir, `keys-${name}`), `${lines.join('\n')}\n`);
  const config = configSchema.parse({
    dataDir: join(dir, 'data'),
    queueDir: join(dir, `queue-${name}`),
    tokens: `writer:${TOKENS.writer},auditor:${TOKENS.auditor}`,
    logLevel: 'silent',
    encryptionKeyFile: join(dir, `keys-${name}`),
  });
  const app = await buildApp({ config, store, eventPollMs: 100 });
  apps.push(app);
  return app;
}

beforeAll(() => {
  store = LmdbStore.open({ path: join(dir, 'data') });
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('answers 503 naming the key an instance lacks, records nothing as corrupt, and reads it once the line is added', async () => {
  const b = await instance('b', [k1]);
  const first = await b.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('rolling') });
  expect(first.statusCode).toBe(201);
  const a = await instance('a', [k1, k2]);
  const made = await a.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('rolling') });
  expect(made.statusCode).toBe(201);
  const id = (made.json() as { id: string }).id;

  for (const url of [`/v1/checkpoints/${id}`, '/v1/tasks/rolling/checkpoints/latest', '/v1/tasks/rolling/checkpoints', '/v1/tasks/rolling/audit/verify']) {
    const res = await b.inject({ method: 'GET', url, headers: auth('auditor') });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(503);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'encryption_key_missing', keyId: 'k2', detail: expect.stringContaining('"k2"') });
  }
  // B's writes to the task need its head, sealed with k2 by A: refused the same way, nothing written.
  const refused = await b.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('rolling') });
  expect(refused.statusCode).toBe(503);
  expect(refused.json()).toMatchObject({ code: 'encryption_key_missing', keyId: 'k2' });

  // A sees a whole task: two checkpoints, no corruption recorded, no CHECKPOINT_CORRUPTED event.
  const history = (await a.inject({ method: 'GET', url: '/v1/tasks/rolling/checkpoints', headers: auth('auditor') })).json() as { items: unknown[]; corrupted?: unknown };
  expect(history.items).toHaveLength(2);
  expect(history.corrupted).toBeUndefined();
  const audit = (await a.inject({ method: 'GET', url: '/v1/tasks/rolling/audit', headers: auth('auditor') })).json() as { items: { action: string }[] };
  expect(audit.items.map((e) => e.action)).toEqual(['checkpoint.created', 'checkpoint.created']);
  const events = (await a.inject({ method: 'GET', url: '/v1/events?limit=1000', headers: auth('auditor') })).json() as { items: { type: string }[] };
  expect(events.items.map((e) => e.type)).not.toContain('CHECKPOINT_CORRUPTED');

  // B with the new line reads the checkpoint, verified.
  const rolled = await instance('b2', [k1, k2]);
  const read = await rolled.inject({ method: 'GET', url: `/v1/checkpoints/${id}`, headers: auth('auditor') });
  expect(read.statusCode).toBe(200);
});
