/**
 * The replayer of the write queue: while writes wait and the store answers,
 * it applies them in batches, each task's writes in the order they were
 * accepted and different tasks side by side, each through the same handler
 * as a live write, with its operation id recorded in the same transaction as its
 * effect, so that a replay after a crash (or after FoundationDB's "commit
 * unknown result") applies once. A write the store refuses goes to the
 * dead-letter list; an outage stops the replay until the next try. Stopping
 * finishes the write in progress first.
 *
 * @module
 */
import type { ServiceContext } from '../service/context.js';
import { deadLetterOf } from '../service/dead-letters.js';
import { execute } from '../service/execute.js';
import { isOutage } from '../service/transactions.js';
import type { QueuedRecord, WriteQueue } from './write-queue.js';

/** Writes replayed together; the journal records them as applied together. */
const BATCH = 256;

export interface Replayer {
  stop(): Promise<void>;
  /** Runs a pass now (tests, and right after a fault is cleared). */
  kick(): Promise<void>;
}

export function startReplayer(ctx: ServiceContext, queue: WriteQueue, intervalMs: number): Replayer {
  let running: Promise<void> | undefined;
  let stopping = false;

  const report = (): void => {
    ctx.metrics.queueDepth.set(queue.depth);
    const oldest = queue.oldest;
    ctx.metrics.queueAgeSeconds.set(oldest === undefined ? 0 : Math.max(0, (ctx.now().getTime() - Date.parse(oldest)) / 1000));
  };

  const pass = async (): Promise<void> => {
    report();
    if (queue.depth === 0) return;
    try {
      await ctx.store.ping();
    } catch {
      return;
    }
    while (queue.depth > 0 && !stopping) {
      // A batch at a time: each task's writes in order, the tasks side by side (their commits share fsyncs).
      const batch = queue.head(BATCH);
      const byKey = new Map<string, QueuedRecord[]>();
      for (const record of batch) {
        const key = queue.orderKey(record);
        byKey.set(key, [...(byKey.get(key) ?? []), record]);
      }
      let outage = false;
      await Promise.all(
        [...byKey.values()].map(async (records) => {
          for (const record of records) {
            if (outage) return;
            try {
              await execute(ctx, { ...record.command, fromQueue: true });
            } catch (error) {
              if (isOutage(error)) {
                outage = true;
                return;
              }
              await execute(ctx, deadLetterOf(ctx, record, error));
            }
          }
        }),
      );
      // After an outage the whole batch is tried again: what did apply is recognised by its operation id.
      if (outage) break;
      queue.done(batch.length);
      report();
    }
    if (queue.depth === 0) ctx.log.info({}, 'write queue drained');
  };

  const run = (): Promise<void> => {
    running ??= pass()
      .catch((error: unknown) => ctx.log.warn({ err: error }, 'write queue replay failed; retrying at the next pass'))
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  void run();
  return {
    async stop() {
      stopping = true;
      clearInterval(timer);
      await running;
    },
    kick: run,
  };
}
