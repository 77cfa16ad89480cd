/**
 * The dead-letter list of the write queue: a queued write that the store
 * refused when it was replayed is recorded here once, with why, and
 * announced with WRITE_DEAD_LETTERED; an admin lists them
 * (`GET /v1/admin/dead-letters`) to decide what to resubmit.
 *
 * @module
 */
import { checkpointOf, type Actor, type QueueableCommand } from '../domain/commands.js';
import type { DeadLetter } from '../domain/dead-letter.js';
import { AppError } from '../errors.js';
import { StoreError } from '../store/store.js';
import { snapshot, type ServiceContext } from './context.js';
import { decodeCursor, encodeCursor, type Page } from './cursor.js';
import { Repository } from './repository/repository.js';
import { transact } from './retries.js';
import { cloudEvent } from './task-transaction.js';

/** Why a replayed write failed, as the problem it would have been answered with. */
export function failureOf(error: unknown): DeadLetter['error'] {
  if (error instanceof AppError) return { code: error.code, status: error.status, ...(error.detail ? { detail: error.detail } : {}) };
  // Over the store's limits: what a live write would have been answered (the HTTP error mapping says the same).
  if (error instanceof StoreError && error.code === 'too_large') return { code: 'payload_too_large', status: 413 };
  return { code: 'internal_error', status: 500 };
}

/** Records a dead letter once (a replay after a crash finds it recorded) and announces it. */
export async function recordDeadLetter(ctx: ServiceContext, entry: { command: QueueableCommand; taskId?: string; enqueuedAt: string }, error: unknown): Promise<void> {
  const { command } = entry;
  const now = ctx.now().toISOString();
  const letter: DeadLetter = {
    id: command.operationId,
    kind: command.kind,
    checkpointId: checkpointOf(command),
    ...(entry.taskId !== undefined ? { taskId: entry.taskId } : {}),
    command,
    enqueuedAt: entry.enqueuedAt,
    failedAt: now,
    error: failureOf(error),
  };
  const recorded = await transact(ctx, async (tx) => {
    const repo = new Repository(tx, command.actor.tenant);
    if ((await repo.deadLetters.get(letter.id)) !== undefined) return false;
    await repo.deadLetters.put(letter);
    const { command: _command, ...data } = letter;
    repo.events.append([cloudEvent(ctx, command.actor.tenant, letter.taskId ?? '', { type: 'WRITE_DEAD_LETTERED', subject: letter.id, data }, now)]);
    return true;
  });
  if (!recorded) return;
  ctx.metrics.queueDeadLetters.inc();
  ctx.notifier.notify(command.actor.tenant);
  ctx.log.error({ tenant: command.actor.tenant, operationId: letter.id, kind: letter.kind, checkpointId: letter.checkpointId, code: letter.error.code }, 'queued write could not apply; moved to the dead-letter list');
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
