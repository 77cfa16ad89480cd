/**
 * Deleting operation records past the retention window. A record lets a
 * retried request (or a body FoundationDB runs again) find its first answer;
 * after the window, which is longer than any client retries, it only takes
 * space, and a request repeating its Idempotency-Key is a new operation.
 * Records are deleted in bounded batches, each its own small transaction.
 *
 * @module
 */
import type { ServiceContext } from './context.js';
import { currentSettings } from './fleet/settings.js';
import type { Periodic } from './maintenance/periodic.js';
import { dutyPeriodic } from './fleet/duties.js';
import { expireOperations } from './repository/repository.js';
import { runTransaction, type RunnerContext } from './transactions.js';

export interface OperationSweepSettings {
  /** How often the sweeper looks (ms). Records older than the fleet's operation retention go (`fleet/settings.ts`). */
  intervalMs: number;
}

/** Records one transaction deletes: two small clears each, far inside every limit. */
const BATCH = 500;
/** Batches one sweep runs before it yields to the next tick, so a backlog cannot hold the writer for long. */
const BATCHES_PER_SWEEP = 20;

/** Deletes operation records made before `before` (epoch ms), at most `batches` batches; returns how many. */
export async function sweepOperations(ctx: RunnerContext, before: number, batches = BATCHES_PER_SWEEP): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < batches; i++) {
    const count = await runTransaction(ctx, (tx) => expireOperations(tx, before, BATCH));
    deleted += count;
    if (count < BATCH) break;
  }
  return deleted;
}

export function startOperationSweeper(ctx: ServiceContext, settings: OperationSweepSettings): Periodic {
  return dutyPeriodic(ctx, 'operation-sweep', settings.intervalMs, async () => {
    const { operationRetentionMs } = await currentSettings(ctx);
    const deleted = await sweepOperations(ctx, ctx.now().getTime() - operationRetentionMs);
    if (deleted > 0) ctx.log.info({ deleted }, 'expired operation records deleted');
  });
}
