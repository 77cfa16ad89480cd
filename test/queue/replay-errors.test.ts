/**
 * The replay path under each store error code, over a real LMDB store
 * wrapped by the fault injector (the store answers pings; its transactions
 * fail with the chosen code). A failure a later try can fix — unavailable,
 * timeout, conflict, a commit of unknown outcome (landed or not), a store
 * not configured — keeps the write queued and the next pass applies it,
 * once. Only a failure no retry changes (too large, an internal error the
 * backend calls final) sends it to the dead-letter list, with its problem.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { CreateCheckpoint } from '../../src/domain/commands.js';
import { startReplayer, type Replayer } from '../../src/queue/replayer.js';
import { WriteQueue } from '../../src/queue/write-queue.js';
import { snapshot, type ServiceContext } from '../../src/service/context.js';
import { listDeadLetters } from '../../src/service/dead-letters.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { FaultInjectingStore } from '../../src/store/faults.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import type { StoreErrorCode } from '../../src/store/store.js';
import { checkpointBody } from '../support/app.js';

const actor = { tenant: 'default', role: 'admin', subject: 'admin' } as const;

interface Rig {
  faults: FaultInjectingStore;
  queue: WriteQueue;
  replayer: Replayer;
  /** A context over the store without faults, to look at what it holds. */
  direct: ServiceContext;
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function rig(): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-replay-errors-'));
  const lmdb = LmdbStore.open({ path: join(dir, 'data') });
  const faults = new FaultInjectingStore(lmdb);
  const { queue } = await WriteQueue.open({ dir: join(dir, 'queue'), maxBytes: 1024 * 1024 });
  // Conflicts and unknown outcomes are retried until this deadline (unreachable stores three times), then the pass stops.
  const ctx = standaloneContext(faults, { queue, transactionDeadlineMs: 300 });
  // A long interval: the test runs each pass itself with kick().
  const replayer = startReplayer(ctx, queue, { intervalMs: 60_000 });
  await replayer.kick();
  cleanup = async () => {
    await replayer.stop();
    await queue.close();
    await lmdb.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { faults, queue, replayer, direct: standaloneContext(lmdb) };
}

function create(taskId: string): CreateCheckpoint {
  return {
    kind: 'checkpoint.create',
    operationId: `op:${taskId}`,
    fingerprint: 'f',
    actor: { tenant: 'default', role: 'writer', subject: 'writer' },
    at: '2026-11-23T10:00:00.000Z',
    taskId,
    checkpointId: '01900000-0000-7000-8000-0000000000aa',
    input: checkpointInput.parse(checkpointBody(taskId)),
  };
}

/** What the store holds of the task: its history, its audit entries, and the tenant's dead letters. */
async function stored(ctx: ServiceContext, taskId: string) {
  const [history, audit] = await snapshot(ctx, 'default', async (repo) => [await repo.checkpoints.history(taskId, 100), (await repo.tasks.head(taskId))?.audit.seq ?? 0] as const);
  const letters = (await listDeadLetters(ctx, actor, 100)).items;
  return { history: history.map((entry) => entry.checkpointId), audit, letters: letters.map((letter) => ({ id: letter.id, error: letter.error })) };
}

describe('replaying a queued write when the store fails with', () => {
  const transient: { code: StoreErrorCode; afterCommit?: boolean }[] = [
    { code: 'unavailable' },
    { code: 'timeout' },
    { code: 'conflict' },
    { code: 'commit_unknown' },
    { code: 'commit_unknown', afterCommit: true },
    { code: 'not_configured' },
  ];
  it.each(transient)('$code (after commit: $afterCommit): keeps the write queued and applies it once at the next pass', async ({ code, afterCommit }) => {
    const { faults, queue, replayer, direct } = await rig();
    const command = create(`task-${code}`);
    await queue.enqueue(command, command.taskId, command.at);
    // Every attempt of the write fails, the first and each retry of the transaction runner.
    faults.setFaults({ store: 'error', latencyMs: 0, code, ...(afterCommit ? { afterCommit } : {}) });
    await replayer.kick();
    // The store is fine again: a dead letter, had the replay wrongly chosen one, would now be recorded.
    faults.setFaults({ store: 'ok', latencyMs: 0 });
    expect(queue.depth).toBe(1);
    const during = await stored(direct, command.taskId);
    expect(during.letters).toEqual([]);
    // A commit whose outcome was lost may have landed: the write is then already there, and the replay must not add it again.
    expect(during.history).toEqual(afterCommit ? [command.checkpointId] : []);

    await replayer.kick();
    expect(queue.depth).toBe(0);
    expect(await stored(direct, command.taskId)).toEqual({ history: [command.checkpointId], audit: 1, letters: [] });
  });

  const final: { code: StoreErrorCode; problem: { code: string; status: number } }[] = [
    { code: 'too_large', problem: { code: 'payload_too_large', status: 413 } },
    { code: 'internal', problem: { code: 'internal_error', status: 500 } },
  ];
  it.each(final)('$code: moves the write to the dead-letter list with its problem, and the replay goes on', async ({ code, problem }) => {
    const { faults, queue, replayer, direct } = await rig();
    const command = create(`task-${code}`);
    await queue.enqueue(command, command.taskId, command.at);
    // Only the write's own transaction fails: the dead letter is recorded by the next.
    faults.setFaults({ store: 'error', latencyMs: 0, code, times: 1 });
    await replayer.kick();
    expect(queue.depth).toBe(0);
    // The dead letter is the one entry on the task's audit chain.
    expect(await stored(direct, command.taskId)).toEqual({ history: [], audit: 1, letters: [{ id: command.operationId, error: problem }] });
  });
});
