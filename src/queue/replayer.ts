/**
 * The replayer of the write queue: while writes wait and the store answers,
 * it applies them in batches, each task's writes in the order they were
 * accepted and different tasks side by side, each through the same handler
 * as a live write, with its operation id recorded in the same transaction as its
 * effect, so that a replay after a crash (or after FoundationDB's "commit
 * unknown result") applies once. A write the store refuses goes to the
 * dead-letter list; a failure a later try can fix (an outage, a conflict,
 * a commit of unknown outcome, a value sealed with a key this instance lacks)
 * keeps the write queued and stops the replay until the next pass. A write
 * running longer than {@link STUCK_MS} is named in a warning. Stopping finishes the writes in progress first;
 * draining (a stop while the journal holds writes) replays until the
 * journal is empty or its time is up, then stops.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceContext } from '../service/context.js';
import { AppError } from '../errors.js';
import { deadLetterOf } from '../service/dead-letters.js';
import { currentSettings } from '../service/fleet/settings.js';
import { execute } from '../service/execute.js';
import { inSpan } from '../telemetry/tracing.js';
import { storeCause } from '../service/transactions.js';
import type { StoreErrorCode } from '../store/store.js';
import type { QueuedRecord, WriteQueue } from './write-queue.js';

/** A replayed write running longer than this is named in a warning (a transaction's own deadline is 5 s). */
const STUCK_MS = 30_000;

/** Writes replayed together; the journal records them as applied together. */
const BATCH = 256;

export interface Replayer {
  stop(): Promise<void>;
  /**
   * Replays, pass after pass, until the queue is empty or `withinMs` has
   * passed, then stops as {@link stop} does; answers the writes left. What
   * is left stays in the journal for the next start.
   */
  drain(withinMs: number): Promise<number>;
  /** Runs a pass now (tests, and right after a fault is cleared). */
  kick(): Promise<void>;
}

/**
 * Whether a later try can succeed where this one failed: the store was
 * unreachable, timed out, conflicted, lost a commit's outcome (it may have
 * landed: its operation record tells the next try), is not configured, or
 * had no room on its disk (room is made without a restart).
 * Such a write stays queued. Only what no retry changes is dead-lettered:
 * a refusal by the rules, a value or transaction over the store's limits,
 * or a failure the backend itself calls final (`internal`).
 */
export function transientCause(error: unknown): StoreErrorCode | undefined {
  const code = storeCause(error);
  return code !== undefined && TRANSIENT.has(code) ? code : undefined;
}

const TRANSIENT: ReadonlySet<StoreErrorCode> = new Set(['unavailable', 'timeout', 'conflict', 'commit_unknown', 'not_configured', 'no_space']);

/**
 * Why `error` leaves its write queued for a later pass, or undefined when
 * no later try can change the outcome. Besides the store's transient
 * failures, a value sealed with an encryption key this instance lacks
 * (another instance of the fleet has it): adding the key's line to the key
 * file and restarting applies the write, so dropping it to the dead letters
 * would lose a write one configuration line away from applying.
 */
export function waitCause(error: unknown): { code: string; keyId?: string } | undefined {
  const code = transientCause(error);
  if (code !== undefined) return { code };
  if (error instanceof AppError && error.code === 'encryption_key_missing') {
    const keyId = error.extra?.keyId;
    return { code: error.code, ...(typeof keyId === 'string' ? { keyId } : {}) };
  }
  return undefined;
}

/** A queued write's operation, as {@link startReplayer} remembers it settled: operation ids are each tenant's own. */
function settledKey(record: QueuedRecord): string {
  return `${record.command.actor.tenant}\u0000${record.command.operationId}`;
}

export interface ReplayerSettings {
  intervalMs: number;
}

/**
 * Whether `record` waited longer than operation records are kept (the
 * fleet's operation retention): it may have applied already (a crash after
 * its commit, before the journal counted it) with nothing left to tell, so it
 * is dead-lettered rather than applied a second time. A create is the
 * exception: its id and hash tell a repeat apart (`alreadyCreated`).
 */
async function outlived(ctx: ServiceContext, record: QueuedRecord, retention: () => Promise<number>): Promise<boolean> {
  if (record.command.kind === 'checkpoint.create') return false;
  const age = ctx.now().getTime() - Date.parse(record.enqueuedAt);
  // No retention is shorter than a minute: a younger write needs no read of the settings.
  return age > MIN_OPERATION_RETENTION_MS && age > (await retention());
}

/** The shortest operation retention the settings allow (`domain/fleet-settings.ts`). */
const MIN_OPERATION_RETENTION_MS = 60_000;

export function startReplayer(ctx: ServiceContext, queue: WriteQueue, settings: ReplayerSettings): Replayer {
  const { intervalMs } = settings;
  let running: Promise<void> | undefined;
  let stopping = false;
  /**
   * Writes applied (or dead-lettered) that the journal cannot count yet,
   * because a write before them in it still waits: the next pass skips them
   * rather than running them again, so every pass makes progress however
   * often some other write fails. Process memory only: after a crash their
   * operation records tell.
   */
  const settled = new Set<string>();
  /** The writes being applied now, and since when: a pass that never settles names the write it waits on. */
  const inFlight = new Map<QueuedRecord, number>();
  let lastWatch = 0;
  const watch = (): void => {
    const now = performance.now();
    if (!running || now - lastWatch < STUCK_MS) return;
    let oldest: [QueuedRecord, number] | undefined;
    for (const entry of inFlight) if (oldest === undefined || entry[1] < oldest[1]) oldest = entry;
    if (oldest === undefined || now - oldest[1] < STUCK_MS) return;
    lastWatch = now;
    const [record, since] = oldest;
    ctx.log.warn(
      { operationId: record.command.operationId, kind: record.command.kind, inFlight: inFlight.size, seconds: Math.round((now - since) / 1000), depth: queue.depth },
      'write queue replay: a write has been in progress for a long time',
    );
  };

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
    // Read once a pass, and only when a write old enough to have outlived it waits.
    let retentionMs: Promise<number> | undefined;
    const retention = () => (retentionMs ??= currentSettings(ctx).then((settings) => settings.operationRetentionMs));
    while (queue.depth > 0 && !stopping) {
      // A batch at a time: each task's writes in order, the tasks side by side (their commits share fsyncs).
      const batch = queue.head(BATCH);
      const byKey = new Map<string, number[]>();
      for (const [index, record] of batch.entries()) {
        const key = queue.orderKey(record);
        byKey.set(key, [...(byKey.get(key) ?? []), index]);
      }
      const done = batch.map((record) => settled.has(settledKey(record)));
      let failed: ReturnType<typeof waitCause>;
      await Promise.all(
        [...byKey.values()].map(async (indexes) => {
          for (const index of indexes) {
            // A stop at the end of a grace period does not wait for the rest of the batch: the journal keeps it.
            if (stopping) return;
            if (done[index]) continue;
            const record = batch[index]!;
            inFlight.set(record, performance.now());
            try {
              if (await outlived(ctx, record, retention)) {
                const detail = `The write waited in the queue since ${record.enqueuedAt}, longer than the operation retention, so whether it already applied can no longer be told; it was not applied again.`;
                await execute(ctx, deadLetterOf(ctx, record, new AppError('queued_write_outlived', { detail })));
              } else {
                await inSpan('baton.queue.replay', { 'baton.command': record.command.kind, 'baton.operation.id': record.command.operationId }, (traceContext) => execute({ ...ctx, traceContext }, { ...record.command, fromQueue: true }));
              }
            } catch (error) {
              const wait = waitCause(error);
              // The task's later writes wait for this one; other tasks go on.
              if (wait !== undefined) {
                failed ??= wait;
                return;
              }
              await execute(ctx, deadLetterOf(ctx, record, error));
            } finally {
              inFlight.delete(record);
            }
            done[index] = true;
            settled.add(settledKey(record));
          }
        }),
      );
      // The journal counts from its start: the writes up to the first one still to apply leave the queue.
      let applied = 0;
      while (applied < batch.length && done[applied]) applied += 1;
      if (applied > 0) {
        for (const record of batch.slice(0, applied)) settled.delete(settledKey(record));
        queue.done(applied);
        report();
      }
      if (failed) {
        if (failed.keyId !== undefined) {
          ctx.log.warn(
            { code: failed.code, keyId: failed.keyId, depth: queue.depth },
            `write queue replay waits: a queued write needs encryption key "${failed.keyId}", which this instance's key file lacks; add its line to BATON_ENCRYPTION_KEY_FILE and restart`,
          );
        } else {
          ctx.log.warn({ code: failed.code, depth: queue.depth }, 'write queue replay paused by a transient store failure; retrying at the next pass');
        }
        break;
      }
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

  const timer = setInterval(() => {
    watch();
    void run();
  }, intervalMs);
  timer.unref();
  void run();
  const stop = async (): Promise<void> => {
    stopping = true;
    clearInterval(timer);
    await running;
  };

  return {
    stop,
    async drain(withinMs) {
      clearInterval(timer);
      const until = performance.now() + withinMs;
      // The pass in progress stops at its next write once the time is up.
      const deadline = setTimeout(() => {
        stopping = true;
      }, withinMs);
      try {
        while (queue.depth > 0 && !stopping) {
          await run();
          const left = until - performance.now();
          if (queue.depth === 0 || left <= 0) break;
          // The store is down, or a write waits out a transient failure: the next pass at the usual interval.
          await sleep(Math.min(intervalMs, left));
        }
      } finally {
        clearTimeout(deadline);
        await stop();
      }
      return queue.depth;
    },
    kick: run,
  };
}
