/**
 * What auditors read: a task's audit entries, page by page or as one stream,
 * and the verification of its chain. Entries are sealed and appended by the
 * task transaction; this module only reads.
 *
 * @module
 */
import { checkChain, GENESIS_HASH, type AuditEntry, type ChainCheck } from '../domain/audit.js';
import type { Actor } from '../domain/commands.js';
import { AppError } from '../errors.js';
import { snapshot, type ServiceContext } from './context.js';
import { decodeCursor, encodeCursor, type Page } from './cursor.js';

const NO_TASK = 'No task with this id exists.';
/** Entries read per transaction when a whole trail is streamed or verified. */
const BATCH = 500;

const isSeq = (value: unknown): value is { s: number } =>
  typeof value === 'object' && value !== null && Number.isSafeInteger((value as { s?: unknown }).s);

export async function auditPage(ctx: ServiceContext, actor: Actor, taskId: string, limit: number, cursor?: string): Promise<Page<AuditEntry>> {
  const after = decodeCursor(cursor, isSeq)?.s ?? 0;
  const rows = await snapshot(ctx, actor.tenant, async (repo) => {
    if ((await repo.tasks.head(taskId)) === undefined) return undefined;
    return repo.audit.after(taskId, after, limit + 1);
  });
  if (rows === undefined) throw new AppError('not_found', { detail: NO_TASK });
  const items = rows.slice(0, limit);
  const page: Page<AuditEntry> = { items };
  if (rows.length > limit) page.nextCursor = encodeCursor({ s: items[items.length - 1]!.seq });
  return page;
}

/** Every entry of a task in order, read in bounded batches (each its own transaction). */
export async function* auditEntries(ctx: ServiceContext, actor: Actor, taskId: string): AsyncGenerator<AuditEntry> {
  let after = 0;
  for (;;) {
    const rows = await snapshot(ctx, actor.tenant, (repo) => repo.audit.after(taskId, after, BATCH));
    for (const row of rows) yield row;
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1]!.seq;
  }
}

export async function taskExists(ctx: ServiceContext, actor: Actor, taskId: string): Promise<boolean> {
  return (await snapshot(ctx, actor.tenant, (repo) => repo.tasks.head(taskId))) !== undefined;
}

/** Recomputes the chain from the first entry; names the first entry that does not hold. */
export async function verifyAudit(ctx: ServiceContext, actor: Actor, taskId: string): Promise<ChainCheck> {
  const head = await snapshot(ctx, actor.tenant, (repo) => repo.tasks.head(taskId));
  if (head === undefined) throw new AppError('not_found', { detail: NO_TASK });
  const state = { expectedSeq: 1, prevHash: GENESIS_HASH, count: 0 };
  const batch: AuditEntry[] = [];
  for await (const entry of auditEntries(ctx, actor, taskId)) {
    batch.push(entry);
    if (batch.length === BATCH) {
      const broken = checkChain(batch.splice(0), state);
      if (broken) return counted(ctx, broken);
    }
  }
  const broken = checkChain(batch, state);
  if (broken) return counted(ctx, broken);
  // The head remembers the tip: entries cut off the end of the chain are a break too.
  const lastSeq = state.expectedSeq - 1;
  if (lastSeq < head.audit.seq) {
    return counted(ctx, { ok: false, entries: state.count, firstBrokenSeq: state.expectedSeq, reason: 'missing entry', expected: { seq: head.audit.seq }, found: { seq: lastSeq } });
  }
  if (state.prevHash !== head.audit.hash) {
    return counted(ctx, { ok: false, entries: state.count, firstBrokenSeq: state.expectedSeq, reason: 'missing entry', expected: { hash: head.audit.hash }, found: { hash: state.prevHash } });
  }
  return counted(ctx, { ok: true, entries: state.count });
}

/** Counts a verification by its result (`audit_verifications_total`). */
function counted(ctx: ServiceContext, check: ChainCheck): ChainCheck {
  ctx.metrics.auditVerifications.inc({ result: check.ok ? 'ok' : 'broken' });
  return check;
}

const isAfterTask = (value: unknown): value is { t: string } => typeof value === 'object' && value !== null && typeof (value as { t?: unknown }).t === 'string';

/** GET /v1/tasks: the tenant's task ids in id order, paged (what `baton verify` walks). */
export async function listTasks(ctx: ServiceContext, actor: Actor, limit: number, cursor?: string): Promise<Page<{ taskId: string }>> {
  const after = decodeCursor(cursor, isAfterTask)?.t;
  const ids = await snapshot(ctx, actor.tenant, (repo) => repo.tasks.ids(after, limit + 1));
  const items = ids.slice(0, limit).map((taskId) => ({ taskId }));
  const page: Page<{ taskId: string }> = { items };
  if (ids.length > limit) page.nextCursor = encodeCursor({ t: items[items.length - 1]!.taskId });
  return page;
}
