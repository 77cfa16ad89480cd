/**
 * What auditors read: a task's audit entries, page by page or as one stream,
 * and the verification of its chain.
 *
 * @module
 */
import { AppError } from '../errors.js';
import { GENESIS_HASH, checkChain, listAudit, type AuditEntry, type ChainCheck } from './audit.js';
import { snapshot, type Actor, type ServiceContext } from './context.js';
import { decodeCursor, encodeCursor, type Page } from './cursor.js';
import { keyspaceOf, readHead } from './task-write.js';

const isSeq = (value: unknown): value is { s: number } =>
  typeof value === 'object' && value !== null && Number.isSafeInteger((value as { s?: unknown }).s);

export async function auditPage(ctx: ServiceContext, actor: Actor, taskId: string, limit: number, cursor?: string): Promise<Page<AuditEntry>> {
  const ks = keyspaceOf(actor.tenant);
  const after = decodeCursor(cursor, isSeq)?.s ?? 0;
  const rows = await snapshot(ctx, async (tx) => {
    if ((await readHead(tx, ks, taskId)) === undefined) return undefined;
    return listAudit(tx, ks.audit, taskId, after, limit + 1);
  });
  if (rows === undefined) throw new AppError('not_found', { detail: 'No task with this id exists.' });
  const items = rows.slice(0, limit);
  const page: Page<AuditEntry> = { items };
  if (rows.length > limit) page.nextCursor = encodeCursor({ s: items[items.length - 1]!.seq });
  return page;
}

/** Every entry of a task in order, read in bounded batches (each its own transaction). */
export async function* auditEntries(ctx: ServiceContext, actor: Actor, taskId: string): AsyncGenerator<AuditEntry> {
  const ks = keyspaceOf(actor.tenant);
  let after = 0;
  for (;;) {
    const rows = await snapshot(ctx, (tx) => listAudit(tx, ks.audit, taskId, after, 500));
    for (const row of rows) yield row;
    if (rows.length < 500) return;
    after = rows[rows.length - 1]!.seq;
  }
}

export async function taskExists(ctx: ServiceContext, actor: Actor, taskId: string): Promise<boolean> {
  const ks = keyspaceOf(actor.tenant);
  return (await snapshot(ctx, (tx) => readHead(tx, ks, taskId))) !== undefined;
}

/** Recomputes the chain from the first entry; names the first entry that does not hold. */
export async function verifyAudit(ctx: ServiceContext, actor: Actor, taskId: string): Promise<ChainCheck> {
  const ks = keyspaceOf(actor.tenant);
  const head = await snapshot(ctx, (tx) => readHead(tx, ks, taskId));
  if (head === undefined) throw new AppError('not_found', { detail: 'No task with this id exists.' });
  const state = { expectedSeq: 1, prevHash: GENESIS_HASH, count: 0 };
  const batch: AuditEntry[] = [];
  for await (const entry of auditEntries(ctx, actor, taskId)) {
    batch.push(entry);
    if (batch.length === 500) {
      const broken = checkChain(batch.splice(0), state);
      if (broken) return broken;
    }
  }
  const broken = checkChain(batch, state);
  if (broken) return broken;
  // The head remembers the tip: entries cut off the end of the chain are a break too.
  if (state.expectedSeq - 1 < head.audit.seq || state.prevHash !== head.audit.hash) {
    return { ok: false, entries: state.count, firstBrokenSeq: state.expectedSeq, reason: 'missing entry' };
  }
  return { ok: true, entries: state.count };
}
