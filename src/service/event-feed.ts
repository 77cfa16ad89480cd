/**
 * Reading the event outbox: a page after a cursor, or a live feed that waits
 * for new events and never repeats or skips one.
 *
 * @module
 */
import { AppError } from '../errors.js';
import { snapshot, type Actor, type ServiceContext } from './context.js';
import { isEventCursor, readEvents, type StoredEvent } from './events.js';
import { keyspaceOf } from './task-write.js';

export interface EventQuery {
  after?: string;
  types?: ReadonlySet<string>;
  limit: number;
}

function checkCursor(after: string | undefined): void {
  if (after !== undefined && !isEventCursor(after)) throw new AppError('invalid_cursor');
}

export async function eventPage(ctx: ServiceContext, actor: Actor, query: EventQuery): Promise<{ items: StoredEvent[]; nextCursor?: string }> {
  checkCursor(query.after);
  const ks = keyspaceOf(actor.tenant);
  // One event more than asked tells whether this is the last page.
  const { items } = await snapshot(ctx, (tx) => readEvents(tx, ks.events, query.after, query.limit + 1, query.types));
  const page: { items: StoredEvent[]; nextCursor?: string } = { items: items.slice(0, query.limit) };
  if (items.length > query.limit) page.nextCursor = page.items[page.items.length - 1]!.cursor;
  return page;
}

/**
 * The cursor of the newest event now, or undefined when there is none: where a
 * stream without a cursor starts, so it shows the present and not history.
 * Fixed before the client is told it is connected, so nothing committed after
 * that can be missed.
 */
export async function presentCursor(ctx: ServiceContext, actor: Actor): Promise<string | undefined> {
  const ks = keyspaceOf(actor.tenant);
  return snapshot(ctx, async (tx) => {
    const rows = await tx.getRange(ks.events.range().begin, ks.events.range().end, { limit: 1, reverse: true });
    return rows.length === 0 ? undefined : (ks.events.unpack(rows[0]!.key)[0] as unknown as { value: Buffer }).value.toString('hex');
  });
}

/**
 * Yields events after `after` (from the beginning when absent) as they are committed, until `signal` aborts.
 * Wakes on this process's commits and polls, so events written by another
 * instance arrive too.
 */
export async function* liveEvents(
  ctx: ServiceContext,
  actor: Actor,
  query: Omit<EventQuery, 'limit'>,
  signal: AbortSignal,
  pollMs = 1_000,
): AsyncGenerator<StoredEvent> {
  checkCursor(query.after);
  const ks = keyspaceOf(actor.tenant);
  let cursor = query.after;
  let wake: (() => void) | undefined;
  // Set by a commit that lands between a read and the wait, so the wait is skipped.
  let dirty = false;
  const unsubscribe = ctx.notifier.subscribe((tenant) => {
    if (tenant !== actor.tenant) return;
    dirty = true;
    wake?.();
  });
  const onAbort = (): void => wake?.();
  signal.addEventListener('abort', onAbort);
  try {
    while (!signal.aborted) {
      dirty = false;
      const { items, last } = await snapshot(ctx, (tx) => readEvents(tx, ks.events, cursor, 500, query.types));
      for (const event of items) yield event;
      if (last !== undefined) cursor = last;
      if (items.length > 0 || last !== undefined || dirty) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    unsubscribe();
    signal.removeEventListener('abort', onAbort);
  }
}
