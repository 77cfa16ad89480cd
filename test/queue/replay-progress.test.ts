/**
 * A replay makes progress under a store that fails some transactions on
 * every pass, as a loaded FoundationDB cluster does (conflicts past the
 * deadline, transactions too old): the writes a pass applied are counted as
 * applied (the journal's applied count moves over the batch's applied
 * prefix), so the next pass starts after them instead of running the whole
 * batch again, and the queue drains. A batch counted only once all of it
 * applied never drained: one failure somewhere in 256 writes each pass held
 * every write behind it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import type { CreateCheckpoint } from '../../src/domain/commands.js';
import { startReplayer } from '../../src/queue/replayer.js';
import { WriteQueue } from '../../src/queue/write-queue.js';
import { snapshot } from '../../src/service/context.js';
import { standaloneContext } from '../../src/service/standalone.js';
import { FaultInjectingStore } from '../../src/store/faults.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { checkpointBody } from '../support/app.js';

const WRITES = 600;

function create(n: number): CreateCheckpoint {
  const taskId = `progress-${n}`;
  return {
    kind: 'checkpoint.create',
    operationId: `op:progress:${n}`,
    fingerprint: 'f',
    actor: { tenant: 'default', role: 'writer', subject: 'writer' },
    at: '2026-11-27T10:00:00.000Z',
    taskId,
    checkpointId: `01900000-0000-7000-8000-${String(n).padStart(12, '0')}`,
    input: checkpointInput.parse(checkpointBody(taskId)),
  };
}

it('drains a queue while some transactions fail on every pass, each write applied once', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-replay-progress-'));
  const lmdb = LmdbStore.open({ path: join(dir, 'data') });
  const faults = new FaultInjectingStore(lmdb);
  const { queue } = await WriteQueue.open({ dir: join(dir, 'queue'), maxBytes: 64 * 1024 * 1024 });
  // Conflicts are retried for 20 ms only: a few writes of each pass give up and stay queued.
  const ctx = standaloneContext(faults, { queue, transactionDeadlineMs: 20 });
  const replayer = startReplayer(ctx, queue, { intervalMs: 60_000 });
  try {
    for (let n = 0; n < WRITES; n += 1) await queue.enqueue(create(n), `progress-${n}`, '2026-11-27T10:00:00.000Z');
    faults.setFaults({ store: 'ok', latencyMs: 0, conflictRate: 0.6 });
    const depths: number[] = [];
    for (let pass = 0; pass < 60 && queue.depth > 0; pass += 1) {
      await replayer.kick();
      depths.push(queue.depth);
    }
    expect(faults.injectedFailures.conflict ?? 0).toBeGreaterThan(0);
    expect(queue.depth, `depth after each pass: ${depths.join(', ')}`).toBe(0);
    faults.setFaults({ store: 'ok', latencyMs: 0 });
    const direct = standaloneContext(lmdb);
    const counts = await snapshot(direct, 'default', async (repo) => Promise.all(Array.from({ length: WRITES }, async (_, n) => (await repo.checkpoints.history(`progress-${n}`, 10)).length)));
    expect(counts.filter((count) => count !== 1)).toEqual([]);
  } finally {
    await replayer.stop();
    await queue.close();
    await lmdb.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
