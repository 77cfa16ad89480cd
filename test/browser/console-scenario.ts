/**
 * The story the console test looks at, written over real HTTP the way an
 * orchestrator and its agents write it, then damaged on disk the way a
 * failing disk or an intruder would:
 *
 * - task `release-42`: agent-a (lease epoch 1) writes a checkpoint and
 *   changes its phase (version 2), hands off on `context_limit` to a
 *   reviewer; agent-b acknowledges (epoch 2) and writes on; agent-b stops
 *   answering, a recovery starts (the epoch is raised to 3) and agent-c
 *   completes it (epoch 4), writes a checkpoint and finalizes it with an
 *   approval signature. Then agent-b's last checkpoint is corrupted in the
 *   LMDB file.
 * - task `ledger-7`: three checkpoints, then its second audit entry is
 *   changed in the LMDB file, so its chain no longer verifies.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { chainHash, type AuditEntry } from '../../src/domain/audit.js';
import type { Checkpoint } from '../../src/domain/checkpoint.js';
import { decodeValue, encodeValue, tenantKeyspace } from '../../src/store/keyspace.js';
import { decompress } from '../../src/service/repository/compression.js';
import { TOKENS, checkpointBody, type TestApp } from '../support/app.js';


export interface Scenario {
  task: string;
  /** agent-a's checkpoint, changed once, then finalized by the handoff. */
  first: Checkpoint;
  handoffId: string;
  /** The checkpoint agent-b resumed from, and the one it wrote next (corrupted on disk). */
  resumed: Checkpoint;
  corrupted: Checkpoint;
  /** agent-c's checkpoint after the recovery, finalized and signed. */
  recovered: Checkpoint;
  recoveryId: string;
  ledger: string;
  /** Where ledger-7's chain breaks: the hash the entry's content gives, and the hash stored with it. */
  ledgerBreak: { seq: number; expected: string; found: string };
}

/**
 * Calls the API as an admin. A call is sent again once when the connection
 * fails (the test drops every connection of the server to see the console
 * reconnect), with the same Idempotency-Key, so it applies once.
 */
export function apiCaller(base: string) {
  return async function call<T = Checkpoint>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const init = {
      method,
      headers: { authorization: `Bearer ${TOKENS.admin}`, 'idempotency-key': randomUUID(), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    };
    const response = await fetch(`${base}${path}`, init).catch(() => fetch(`${base}${path}`, init));
    const text = await response.text();
    expect(response.status, `${method} ${path}: ${text}`).toBeLessThan(300);
    return (text === '' ? {} : JSON.parse(text)) as T;
  };
}

export async function writeScenario(t: TestApp, base: string): Promise<Scenario> {
  const call = apiCaller(base);
  const task = 'release-42';
  const epoch = (n: number) => ({ 'baton-lease-epoch': String(n) });

  await call('POST', `/v1/tasks/${task}/lease`, { agentId: 'agent-a', ttlMs: 600_000 });
  const created = await call('POST', '/v1/checkpoints', checkpointBody(task, { agentId: 'agent-a', agentType: 'implementation' }), epoch(1));
  const first = await call(
    'PATCH',
    `/v1/checkpoints/${created.id}`,
    { executionState: { phase: 'testing', currentFocus: 'run the integration suite' } },
    { ...epoch(1), 'if-match': '"1"', 'content-type': 'application/merge-patch+json' },
  );
  const started = await call<{ handoff: { id: string } }>('POST', `/v1/checkpoints/${first.id}/handoff`, { trigger: 'context_limit', toAgentType: 'review', note: 'context at 91 %' }, epoch(1));
  const acked = await call<{ checkpoint: Checkpoint }>('POST', `/v1/handoffs/${started.handoff.id}/ack`, { agentId: 'agent-b', agentType: 'review' });
  const resumed = acked.checkpoint;
  const corrupted = await call(
    'POST',
    '/v1/checkpoints',
    checkpointBody(task, { agentId: 'agent-b', agentType: 'review', parentId: resumed.id, executionState: { phase: 'reviewing', completedItems: ['reviewed the parser'], pendingItems: ['review the CLI'] } }),
    epoch(2),
  );
  const recovery = await call<{ recovery: { id: string } }>('POST', `/v1/tasks/${task}/recoveries`, { reason: 'agent-b stopped answering', failure: { kind: 'crash', message: 'no heartbeat for 90 s' } });
  await call('POST', `/v1/recoveries/${recovery.recovery.id}/complete`, { agentId: 'agent-c', agentType: 'review' });
  const written = await call(
    'POST',
    '/v1/checkpoints',
    checkpointBody(task, { agentId: 'agent-c', agentType: 'review', parentId: corrupted.id, executionState: { phase: 'complete', completedItems: ['reviewed the parser', 'reviewed the CLI'] } }),
    epoch(4),
  );
  const recovered = await call('POST', `/v1/checkpoints/${written.id}/finalize`, { status: 'completed', signature: { meaning: 'approval' } }, epoch(4));

  const ledger = 'ledger-7';
  for (const step of ['collect', 'reconcile', 'report']) await call('POST', '/v1/checkpoints', checkpointBody(ledger, { labels: { step } }));

  // The damage, done to the LMDB file under the running server.
  const space = tenantKeyspace('default');
  const recordKey = space.checkpoints.pack(task, String(corrupted.id), 0);
  const record = await read<{ c: string; h: string }>(t, recordKey);
  expect(record.c).toContain('review the CLI');
  await write(t, recordKey, { ...record, c: record.c.replace('review the CLI', 'review nothing') });

  const auditKey = space.audit.pack(ledger, 2);
  const tampered = { ...(await read<AuditEntry>(t, auditKey)), at: '2001-01-01T00:00:00.000Z' };
  await write(t, auditKey, tampered);
  const { hash, ...body } = tampered;

  return {
    task,
    first,
    handoffId: String(started.handoff.id),
    resumed,
    corrupted,
    recovered,
    recoveryId: String(recovery.recovery.id),
    ledger,
    ledgerBreak: { seq: 2, expected: chainHash(body.prevHash, body), found: hash },
  };
}

async function read<T>(t: TestApp, key: Buffer | Uint8Array): Promise<T> {
  let value: T | undefined;
  await t.store.transact(async (tx) => {
    const bytes = await tx.get(key as Buffer);
    expect(bytes).toBeDefined();
    value = decodeValue<T>(decompress(Buffer.from(bytes!)));
  });
  return value!;
}

async function write(t: TestApp, key: Buffer | Uint8Array, value: unknown): Promise<void> {
  await t.store.transact(async (tx) => {
    tx.set(key as Buffer, encodeValue(value));
  });
}
