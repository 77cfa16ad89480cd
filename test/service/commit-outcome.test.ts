/**
 * A write whose commit outcome the store could not learn (FoundationDB's
 * 1021, or 1031 during the commit) is run again and answered from its
 * operation record: the store's test hook reports a real commit as unknown,
 * and a create sent without an Idempotency-Key still has exactly one effect.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { auth, checkpointBody, TOKENS } from '../support/app.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

it('applies a create once when its commit is reported unknown, and answers it from the record', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-unknown-'));
  let unknownCommits = 0;
  // The first commit of the create is reported unknown; the store runs its body again.
  let armed = false;
  const store = LmdbStore.open({
    path: dir,
    hooks: {
      commitOutcomeUnknown: () => {
        if (!armed) return false;
        armed = false;
        unknownCommits += 1;
        return true;
      },
    },
  });
  const config = configSchema.parse({ dataDir: dir, tokens: `writer:${TOKENS.writer},auditor:${TOKENS.auditor}`, logLevel: 'silent' });
  const app = await buildApp({ config, store });
  await app.ready();
  cleanup = async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };

  armed = true;
  const created = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('task-unknown') });
  expect(unknownCommits).toBe(1);
  expect(created.statusCode).toBe(201);
  const id = (created.json() as { id: string }).id;

  const history = (await app.inject({ method: 'GET', url: '/v1/tasks/task-unknown/checkpoints', headers: auth() })).json() as { items: { id: string }[] };
  expect(history.items.map((item) => item.id)).toEqual([id]);
  const audit = (await app.inject({ method: 'GET', url: '/v1/tasks/task-unknown/audit', headers: auth('auditor') })).json() as { items: { action: string }[] };
  expect(audit.items.map((entry) => entry.action)).toEqual(['checkpoint.created']);
  const events = (await app.inject({ method: 'GET', url: '/v1/events', headers: auth('auditor') })).json() as { items: { type: string; subject: string }[] };
  expect(events.items.filter((event) => event.type === 'CHECKPOINT_CREATED').map((event) => event.subject)).toEqual([id]);
});
