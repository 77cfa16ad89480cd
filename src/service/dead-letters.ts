/**
 * The dead-letter list of the write queue: a queued write that the store
 * refused when it was replayed is recorded here once, with why, audited on
 * its task's chain and announced with WRITE_DEAD_LETTERED; an admin lists
 * them (`GET /v1/admin/dead-letters`) to decide what to resubmit. Recording
 * one is a command (`queue.dead_letter`) like any other write.
 *
 * @module
 */
import { checkpointOf, type Actor, type DeadLetterWrite, type QueueableCommand } from '../domain/commands.js';
import type { DeadLetter } from '../domain/dead-letter.js';
import { AppError } from '../errors.js';
import { StoreError } from '../store/store.js';
import { snapshot, type ServiceContext } from './context.js';
import { decodeCursor, encodeCursor, type Page } from './cursor.js';
import { Repository } from './repository/repository.js';
import { cloudEvent, runInTask } from './task-transaction.js';
import { runTransaction } from './transactions.js';

/** Why a replayed write failed, as the problem it would have been answered with. */
export function failureOf(error: unknown): DeadLetter['error'] {
  if (error instanceof AppError) return { code: error.code, status: error.status, ...(error.detail ? { detail: error.detail } : {}) };
  // Over the store's limits: what a live write would have been answered (the HTTP error mapping says the same).
  if (error instanceof StoreError && error.code === 'too_large') return { code: 'payload_too_large', status: 413 };
  return { code: 'internal_error', status: 500 };
}

/** The command that records `entry`'s write as a dead letter, failed with `error`. */
export function deadLetterOf(ctx: ServiceContext, entry: { command: QueueableCommand; taskId?: string; enqueuedAt: string }, error: unknown): DeadLetterWrite {
  const { command } = entry;
  return {
    kind: 'queue.dead_letter',
    // One dead letter per write, however often its replay is retried after a crash.
    operationId: `dead:${command.operationId}`,
    idempotency: 'once',
    fingerprint: '',
    actor: { tenant: command.actor.tenant, role: 'admin', subject: 'baton:write-queue' },
    at: ctx.now().toISOString(),
    ...(entry.taskId !== undefined ? { taskId: entry.taskId } : {}),
    write: command,
    enqueuedAt: entry.enqueuedAt,
    error: failureOf(error),
  };
}

/** Handler of `queue.dead_letter`: the letter once, an audit entry on its task's chain, and its event. */
export async function recordDeadLetter(ctx: ServiceContext, command: DeadLetterWrite): Promise<{ recorded: boolean }> {
  const { write } = command;
  const { tenant } = write.actor;
  // A write queued while the store was down may not have known its task; the store, back now, does.
  const taskId = command.taskId ?? (await snapshot(ctx, tenant, (repo) => repo.checkpoints.taskOf(checkpointOf(write))));
  const letter: DeadLetter = {
    id: write.operationId,
    kind: write.kind,
    checkpointId: checkpointOf(write),
    ...(taskId !== undefined ? { taskId } : {}),
    command: write,
    enqueuedAt: command.enqueuedAt,
    failedAt: command.at,
    error: command.error,
  };
  const { command: _write, ...data } = letter;
  let recorded: boolean;
  if (taskId !== undefined) {
    ({ result: recorded } = await runInTask(ctx, command, taskId, async ({ repo, audit, event }) => {
      if ((await repo.deadLetters.get(letter.id)) !== undefined) return false;
      await repo.deadLetters.put(letter);
      audit({ action: 'write.dead_lettered', checkpointId: letter.checkpointId, details: { operationId: letter.id, kind: letter.kind, code: letter.error.code } });
      event({ type: 'WRITE_DEAD_LETTERED', subject: letter.id, data });
      return true;
    }));
  } else {
    // A write whose task was never known (a change to a checkpoint the store does not hold) has no chain to join.
    const sealing = ctx.vault === undefined ? undefined : await ctx.vault.sealing(ctx, tenant);
    recorded = await runTransaction(ctx, async (tx) => {
      const repo = new Repository(tx, tenant, sealing);
      if ((await repo.deadLetters.get(letter.id)) !== undefined) return false;
      await repo.deadLetters.put(letter);
      repo.events.append([cloudEvent(ctx, tenant, '', { type: 'WRITE_DEAD_LETTERED', subject: letter.id, data }, command.at)]);
      if (ctx.store.watch !== undefined) repo.events.tick();
      return true;
    });
    ctx.notifier.notify(tenant);
  }
  if (!recorded) return { recorded };
  ctx.metrics.queueDeadLetters.inc();
  ctx.log.error({ tenant, operationId: letter.id, kind: letter.kind, checkpointId: letter.checkpointId, code: letter.error.code }, 'queued write could not apply; moved to the dead-letter list');
  return { recorded };
}

const isAfter = (value: unknown): value is { a: string } => typeof value === 'object' && value !== null && typeof (value as { a?: unknown }).a === 'string';

/** GET /v1/admin/dead-letters: the tenant's dead letters in operation-id order. */
export async function listDeadLetters(ctx: ServiceContext, actor: Actor, limit: number, cursor?: string): Promise<Page<DeadLetter>> {
  const after = decodeCursor(cursor, isAfter)?.a;
  const rows = await snapshot(ctx, actor.tenant, (repo) => repo.deadLetters.list(after, limit + 1));
  const items = rows.slice(0, limit);
  const page: Page<DeadLetter> = { items };
  if (rows.length > limit) page.nextCursor = encodeCursor({ a: items[items.length - 1]!.id });
  return page;
}
