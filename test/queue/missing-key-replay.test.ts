/**
 * A queued write that needs an encryption key this instance lacks (DESIGN
 * §5, §10): in a rolling key rotation instance A already seals with `k2`,
 * instance B has only `k1`, and B accepted writes while the store was down.
 * When B replays, the write to A's task cannot be read or written by B. It
 * is not a refusal by the rules, so it stays queued — never dead-lettered,
 * never a replay that fails on every pass without saying why — while other
 * tasks' writes apply; the warning names the key. Once B has the key line,
 * the same journal applies it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { CreateCheckpoint } from '../../src/domain/commands.js';
import { startReplayer } from '../../src/queue/replayer.js';
import { WriteQueue } from '../../src/queue/write-queue.js';
import { snapshot, type ServiceContext } from '../../src/service/context.js';
import { listDeadLetters } from '../../src/service/dead-letters.js';
import { execute } from '../../src/service/execute.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { Vault } from '../../src/service/vault.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { checkpointBody } from '../support/app.js';

const writer = { tenant: 'default', role: 'writer', subject: 'writer' } as const;
const admin = { ...writer, role: 'admin' } as const;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

const id = (n: number) => `01900000-0000-7000-8000-0000000002${String(n).padStart(2, '0')}`;

function create(taskId: string, checkpointId: string): CreateCheckpoint {
  return { kind: 'checkpoint.create', operationId: `op:create:${checkpointId}`, fingerprint: 'f', actor: writer, at: new Date().toISOString(), taskId, checkpointId, input: checkpointInput.parse(checkpointBody(taskId)) };
}

it('keeps a queued write that needs a key this instance lacks, applies the rest, names the key, and applies it once the key is added', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-missing-key-'));
  const k1 = `k1:${randomBytes(32).toString('base64')}`;
  const k2 = `k2:${randomBytes(32).toString('base64')}`;
  const vault = (name: string, lines: string[]): Vault => {
    writeFileSync(join(dir, name), `${lines.join('\n')}\n`);
    return Vault.fromFile(join(dir, name));
  };
  const store = LmdbStore.open({ path: join(dir, 'data') });
  const { queue } = await WriteQueue.open({ dir: join(dir, 'queue'), maxBytes: 1024 * 1024 });
  const lines: { msg: string; keyId?: string }[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; keyId?: string }) });
  const stopping: (() => Promise<void>)[] = [];
  cleanup = async () => {
    for (const stop of stopping) await stop();
    await queue.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };

  // B (k1) made the task first; A (k1, k2) wrote to it since, sealing its head with k2.
  const b: ServiceContext = standaloneContext(store, { vault: vault('keys-b', [k1]), queue, log: log as unknown as ServiceContext['log'] });
  const a = standaloneContext(store, { vault: vault('keys-a', [k1, k2]) });
  await execute(b, create('rolling', id(1)));
  await execute(a, create('rolling', id(2)));

  // Accepted by B while the store was down: one write to A's task between two to a task of B's own.
  await queue.enqueue(create('own', id(3)), 'own', new Date().toISOString());
  await queue.enqueue(create('rolling', id(4)), 'rolling', new Date().toISOString());
  await queue.enqueue(create('own', id(5)), 'own', new Date().toISOString());

  const replayer = startReplayer(b, queue, { intervalMs: 60_000 });
  stopping.push(() => replayer.stop());
  await replayer.kick();
  await replayer.kick();
  // The write waits (the journal counts from its start, so the one after it stays counted too), and nothing is dead-lettered.
  expect(queue.depth).toBe(2);
  expect((await listDeadLetters(a, admin, 100)).items).toEqual([]);
  const own = await snapshot(a, 'default', (repo) => repo.tasks.head('own'));
  expect(own?.seq).toBe(2);
  const waits = lines.filter((line) => line.keyId === 'k2');
  expect(waits.length).toBeGreaterThan(0);
  expect(waits[0]!.msg).toContain('BATON_ENCRYPTION_KEY_FILE');
  await replayer.stop();

  // B restarted with the key line: the same journal applies the waiting write, and the one after it only once.
  const b2 = standaloneContext(store, { vault: vault('keys-b2', [k1, k2]), queue });
  const again = startReplayer(b2, queue, { intervalMs: 60_000 });
  stopping.push(() => again.stop());
  await again.kick();
  expect(queue.depth).toBe(0);
  const heads = await snapshot(a, 'default', async (repo) => [(await repo.tasks.head('rolling'))?.seq, (await repo.tasks.head('own'))?.seq]);
  expect(heads).toEqual([3, 2]);
  expect((await listDeadLetters(a, admin, 100)).items).toEqual([]);
});
