/**
 * Reading the event outbox: a page after a cursor, or a live feed that waits
 * for new events and never repeats or skips one. Events are written by the
 * task transaction; `fleet/event-feed.ts` wakes live feeds after commits.
 *
 * @module
 */
import type { Actor } from '../domain/commands.js';
import type { StoredEvent } from '../domain/events.js';
import { AppError } from '../errors.js';
import { snapshot, type ServiceContext } from './context.js';
import type { Repository } from './repository/repository.js';

const CURSOR = /^[0-9a-f]{24}$/;

/** Whether `value` has the form of an event cursor (the hex of a 12-byte versionstamp). */
export function isEventCursor(value: string): boolean {
  return CURSOR.test(value);
}

export interface EventQuery {
  after?: string;
  types?: ReadonlySet<string>;
  limit: number;
}

/** The most events one read looks at while it filters by type. */
const SCAN_LIMIT = 10_000;

/** Events after `after` (exclusive), oldest first, at most `limit`, optionally only some types. */
async function readEvents(repo: Repository, query: EventQuery): Promise<{ items: StoredEvent[]; last: string | undefined }> {
  const { types, limit } = query;
  const items: StoredEvent[] = [];
  let last = query.after;
  let scanned = 0;
  const batch = Math.max(limit, 100);
  // Filtering by type may skip many events; read on in batches until the page is full.
  while (items.length < limit && scanned < SCAN_LIMIT) {
    const rows = await repo.events.after(last, batch);
    for (const row of rows) {
      scanned += 1;
      last = row.cursor;
      if (types === undefined || types.has(row.event.type)) items.push({ ...row.event, cursor: row.cursor });
      if (items.length >= limit) break;
    }
    if (rows.length < batch) break;
  }
  return { items, last: last === query.after ? undefined : last };
}

function checkCursor(after: string | undefined): void {
  if (after !== undefined && !isEventCursor(after)) throw new AppError('invalid_cursor');
}

/**
 * Refuses a cursor older than what retention has trimmed: the events between
 * it and the oldest one held are gone, and a reader must know it missed them
 * (410 `events_expired`, naming the oldest event still held).
 */
export async function checkHeld(ctx: ServiceContext, actor: Actor, after: string | undefined): Promise<void> {
  if (after === undefined) return;
  const held = await snapshot(ctx, actor.tenant, async (repo) => {
    const trimmed = await repo.events.trimmedUpTo();
    return trimmed !== undefined && after < trimmed ? { oldest: await repo.events.oldest() } : undefined;
  });
  if (held !== undefined) throw new AppError('events_expired', { extra: { oldestId: held.oldest ?? null } });
}

export async function eventPage(ctx: ServiceContext, actor: Actor, query: EventQuery): Promise<{ items: StoredEvent[]; nextCursor?: string }> {
  checkCursor(query.after);
  await checkHeld(ctx, actor, query.after);
  // One event more than asked tells whether this is the last page.
  const { items } = await snapshot(ctx, actor.tenant, (repo) => readEvents(repo, { ...query, limit: query.limit + 1 }));
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
export function presentCursor(ctx: ServiceContext, actor: Actor): Promise<string | undefined> {
  return snapshot(ctx, actor.tenant, (repo) => repo.events.newest());
}

/**
 * Yields events after `after` (from the beginning when absent) as they are
 * committed, until `signal` aborts. Woken by the notifier after any
 * instance's commit; polls only when `pollMs` is given (tests that run two
 * services over one store object in one process, each with a notifier).
 */
export async function* liveEvents(
  ctx: ServiceContext,
  actor: Actor,
  query: Omit<EventQuery, 'limit'>,
  signal: AbortSignal,
  pollMs?: number,
): AsyncGenerator<StoredEvent> {
  checkCursor(query.after);
  let cursor = query.after;
  let wake: (() => void) | undefined;
  // Set by a commit that lands between a read and the wait, so the wait is skipped.
  let dirty = false;
  const unsubscribe = ctx.notifier.subscribe(actor.tenant, () => {
    dirty = true;
    wake?.();
  });
  const onAbort = (): void => wake?.();
  signal.addEventListener('abort', onAbort);
  try {
    while (!signal.aborted) {
      dirty = false;
      const { items, last } = await snapshot(ctx, actor.tenant, (repo) => readEvents(repo, { ...(cursor ? { after: cursor } : {}), ...(query.types ? { types: query.types } : {}), limit: 500 }));
      for (const event of items) yield event;
      if (last !== undefined) cursor = last;
      if (items.length > 0 || last !== undefined || dirty) continue;
      await new Promise<void>((resolve) => {
        const timer = pollMs === undefined ? undefined : setTimeout(resolve, pollMs);
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
