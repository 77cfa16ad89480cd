/**
 * Reading checkpoints: by id (any version), a task's latest and history, a
 * checkpoint's revisions and lineage. Every read verifies the hash; a record
 * that fails is never returned, and is handed to `ctx.integrity` to be
 * reported once. This module only reads.
 *
 * @module
 */
import type { Actor } from '../domain/commands.js';
import type { LineageNode, LineagePage, RevisionInfo } from '../domain/views.js';
import { AppError } from '../errors.js';
import { snapshot, type ServiceContext } from './context.js';
import { decodeCursor, encodeCursor, type Page } from './cursor.js';
import { verifyStored, type CheckpointDoc, type Corruption, type Repository, type StoredCheckpoint } from './repository/repository.js';

export interface Listed<T> extends Page<T> {
  /** Checkpoints skipped because they failed verification. */
  corrupted?: string[];
}

const NO_TASK = 'No task with this id exists.';

/** GET /v1/checkpoints/:id, optionally at an earlier version. */
export async function getCheckpoint(ctx: ServiceContext, actor: Actor, checkpointId: string, version?: number): Promise<CheckpointDoc> {
  const started = performance.now();
  const loaded = await snapshot(ctx, actor.tenant, async (repo) => {
    const taskId = await repo.checkpoints.taskOf(checkpointId);
    if (taskId === undefined) return undefined;
    const found = version === undefined ? await repo.checkpoints.current(taskId, checkpointId) : await repo.checkpoints.version(taskId, checkpointId, version);
    // An id whose record is gone was compacted (a purge takes the id too).
    if (found === undefined && (await repo.checkpoints.current(taskId, checkpointId)) === undefined) return 'compacted' as const;
    return found;
  });
  ctx.metrics.checkpointReadLatency.observe({ operation: 'get' }, performance.now() - started);
  if (loaded === undefined) throw new AppError('not_found');
  if (loaded === 'compacted') throw new AppError('checkpoint_compacted', { extra: { checkpointId } });
  if (!loaded.ok) {
    await ctx.integrity.report(ctx, actor, [loaded.corruption]);
    throw new AppError('checkpoint_corrupted', { extra: { checkpointId } });
  }
  return loaded.doc;
}

const isSeqCursor = (value: unknown): value is { s: number } =>
  typeof value === 'object' && value !== null && Number.isSafeInteger((value as { s?: unknown }).s);

/**
 * A task's checkpoints, newest first. A page stops early, with a cursor, when
 * the transaction's read budget is spent (large checkpoints: bytes).
 */
export async function taskHistory(ctx: ServiceContext, actor: Actor, taskId: string, limit: number, cursor?: string): Promise<Listed<CheckpointDoc>> {
  const started = performance.now();
  const position = decodeCursor(cursor, isSeqCursor);
  const found = await snapshot(ctx, actor.tenant, async (repo) => {
    if ((await repo.tasks.head(taskId)) === undefined) return undefined;
    const budget = repo.budget();
    const entries = await repo.checkpoints.history(taskId, limit + 1, position?.s);
    const page = entries.slice(0, limit);
    const items: CheckpointDoc[] = [];
    const corrupt: Corruption[] = [];
    let last: number | undefined;
    for (const entry of page) {
      if (last !== undefined && !budget.allows(1)) return { items, corrupt, last, more: true };
      const loaded = await repo.checkpoints.current(taskId, entry.checkpointId);
      last = entry.seq;
      if (loaded === undefined) continue;
      if (loaded.ok) items.push(loaded.doc);
      else corrupt.push(loaded.corruption);
    }
    return { items, corrupt, last, more: entries.length > limit };
  });
  ctx.metrics.checkpointReadLatency.observe({ operation: 'history' }, performance.now() - started);
  if (found === undefined) throw new AppError('not_found', { detail: NO_TASK });
  await ctx.integrity.report(ctx, actor, found.corrupt);
  const page: Listed<CheckpointDoc> = { items: found.items };
  if (found.more && found.last !== undefined) page.nextCursor = encodeCursor({ s: found.last });
  if (found.corrupt.length > 0) page.corrupted = found.corrupt.map((c) => c.checkpointId);
  return page;
}

/** How many history entries `latestCheckpoint` reads at a time while it skips corrupt ones. */
const LATEST_BATCH = 20;

/**
 * The newest checkpoint of a task whose hash verifies; the corrupt ones
 * before it are named. Each batch of the walk is its own transaction, so a
 * long run of corrupt checkpoints cannot outgrow one.
 */
export async function latestCheckpoint(ctx: ServiceContext, actor: Actor, taskId: string): Promise<{ checkpoint: CheckpointDoc; skipped: string[] }> {
  const started = performance.now();
  const corrupt: Corruption[] = [];
  let before: number | undefined;
  let checkpoint: CheckpointDoc | undefined;
  for (let first = true; ; first = false) {
    const step = await snapshot(ctx, actor.tenant, async (repo) => {
      if (first && (await repo.tasks.head(taskId)) === undefined) return undefined;
      const entries = await repo.checkpoints.history(taskId, LATEST_BATCH, before);
      for (const entry of entries) {
        const loaded = await repo.checkpoints.current(taskId, entry.checkpointId);
        if (loaded === undefined) continue;
        if (loaded.ok) return { found: loaded.doc, last: true };
        corrupt.push(loaded.corruption);
      }
      before = entries[entries.length - 1]?.seq;
      return { found: undefined, last: entries.length < LATEST_BATCH };
    });
    if (step === undefined) throw new AppError('not_found', { detail: NO_TASK });
    checkpoint = step.found;
    if (step.last) break;
  }
  ctx.metrics.checkpointReadLatency.observe({ operation: 'latest' }, performance.now() - started);
  await ctx.integrity.report(ctx, actor, corrupt);
  // A purged task keeps its head (and audit chain) but has no checkpoint left.
  if (checkpoint === undefined && corrupt.length === 0) throw new AppError('not_found', { detail: 'The task has no checkpoints.' });
  if (checkpoint === undefined) {
    throw new AppError('checkpoint_corrupted', { detail: 'No checkpoint of this task verifies.', extra: { corrupted: corrupt.map((c) => c.checkpointId) } });
  }
  return { checkpoint, skipped: corrupt.map((c) => c.checkpointId) };
}


/** How a listing is paged: at most `limit` items, from where `cursor` left off. */
export interface PageRequest {
  limit?: number;
  cursor?: string;
}

/** Items one revisions or lineage page lists when the caller names no limit. */
export const DEFAULT_PAGE_LIMIT = 1_000;

type RevisionCursor = { k: string; v: number };
const isRevisionCursor = (value: unknown): value is RevisionCursor =>
  typeof value === 'object' && value !== null && typeof (value as { k?: unknown }).k === 'string' && Number.isSafeInteger((value as { v?: unknown }).v);

/**
 * The versions of a checkpoint, oldest first, with their hashes and times;
 * the current version comes last, on the last page. Each page reads every
 * revision once, from its own keys, within the transaction's read budget.
 */
export async function checkpointRevisions(ctx: ServiceContext, actor: Actor, checkpointId: string, request: PageRequest = {}): Promise<Page<RevisionInfo>> {
  const limit = request.limit ?? DEFAULT_PAGE_LIMIT;
  const position = decodeCursor(request.cursor, isRevisionCursor);
  if (position !== undefined && position.k !== checkpointId) throw new AppError('invalid_cursor');
  const page = await snapshot(ctx, actor.tenant, async (repo) => {
    const taskId = await repo.checkpoints.taskOf(checkpointId);
    if (taskId === undefined) return undefined;
    const budget = repo.budget();
    const { entries, done } = await repo.checkpoints.revisionPage(checkpointId, position?.v, limit, budget);
    const items = entries.map((entry) => info(entry.raw, entry.version));
    const last = entries[entries.length - 1]?.version ?? position?.v;
    // The current version is one more key: with no room left for it, it opens the next page.
    if (!done || items.length >= limit || (items.length > 0 && !budget.allows(1))) return { items, last, more: true };
    items.push(info(await repo.checkpoints.raw(taskId, checkpointId).catch(() => undefined), undefined));
    return { items, last, more: false };
  });
  if (page === undefined) throw new AppError('not_found');
  const answer: Page<RevisionInfo> = { items: page.items };
  if (page.more && page.last !== undefined) answer.nextCursor = encodeCursor({ k: checkpointId, v: page.last } satisfies RevisionCursor);
  return answer;
}

function info(raw: StoredCheckpoint | undefined, version: number | undefined): RevisionInfo {
  const verified = verifyStored(raw);
  if (verified.ok) {
    const c = verified.doc.checkpoint;
    return { version: c.version, hash: c.compliance.hash!, updatedAt: c.updatedAt, status: c.status, verified: true };
  }
  // An unreadable record is still listed, so an auditor sees that a version exists and fails.
  return { version: version ?? -1, hash: typeof raw?.h === 'string' ? raw.h : '', updatedAt: '', status: 'active', verified: false };
}




/** Ancestors are walked first, then children: `a` is the next ancestor to read and `d` the depth so far; `c` the last child listed. */
type LineageCursor = { k: string; a?: string; d?: number; c?: string };
const isLineageCursor = (value: unknown): value is LineageCursor => {
  if (typeof value !== 'object' || value === null) return false;
  const { k, a, d, c } = value as Record<string, unknown>;
  return typeof k === 'string' && (a === undefined || (typeof a === 'string' && Number.isSafeInteger(d))) && (c === undefined || typeof c === 'string');
};

/** The deepest ancestor chain listed; linking refuses cycles, and this bounds a walk even over damaged links. */
const MAX_DEPTH = 100_000;
/** Keys one lineage node costs: its parent link or child row, its task, its record. */
const NODE_KEYS = 3;

/**
 * Ancestors (nearest first, up to the root), then children, of a
 * checkpoint, in pages: a page ends at `limit` nodes or when the
 * transaction's read budget is spent, with a cursor to carry on.
 */
export async function checkpointLineage(ctx: ServiceContext, actor: Actor, checkpointId: string, request: PageRequest = {}): Promise<LineagePage> {
  const limit = request.limit ?? DEFAULT_PAGE_LIMIT;
  const position = decodeCursor(request.cursor, isLineageCursor);
  if (position !== undefined && position.k !== checkpointId) throw new AppError('invalid_cursor');
  const result = await snapshot(ctx, actor.tenant, async (repo): Promise<LineagePage | undefined> => {
    if ((await repo.checkpoints.taskOf(checkpointId)) === undefined) return undefined;
    const budget = repo.budget();
    const page: LineagePage = { checkpointId, ancestors: [], children: [] };
    const full = (): boolean => page.ancestors.length + page.children.length >= limit || !budget.allows(NODE_KEYS);
    const more = (next: Omit<LineageCursor, 'k'>): LineagePage => ({ ...page, nextCursor: encodeCursor({ k: checkpointId, ...next }) });

    if (position === undefined || position.a !== undefined) {
      let next = position === undefined ? await repo.links.parentOf(checkpointId) : position.a;
      let depth = position?.d ?? 0;
      const seen = new Set([checkpointId]);
      while (next !== undefined && depth < MAX_DEPTH && !seen.has(next)) {
        if (page.ancestors.length > 0 && full()) return more({ a: next, d: depth });
        seen.add(next);
        const node = await lineageNode(repo, next);
        if (node === undefined) break;
        page.ancestors.push(node);
        depth += 1;
        next = await repo.links.parentOf(next);
      }
    }

    let after = position?.c;
    for (;;) {
      const listed = page.ancestors.length + page.children.length;
      if (listed > 0 && full()) return more(after === undefined ? {} : { c: after });
      // One more child than fits says whether another page is needed; its row is one key more.
      const room = Math.max(1, Math.min(limit - listed, Math.floor((budget.keysLeft() - 1) / NODE_KEYS)));
      const ids = await repo.links.children(checkpointId, room + 1, after);
      for (const childId of ids.slice(0, room)) {
        const node = await lineageNode(repo, childId);
        if (node) page.children.push(node);
        after = childId;
      }
      if (ids.length <= room) return page;
    }
  });
  if (result === undefined) throw new AppError('not_found');
  return result;
}

async function lineageNode(repo: Repository, id: string): Promise<LineageNode | undefined> {
  const taskId = await repo.checkpoints.taskOf(id);
  if (taskId === undefined) return undefined;
  const loaded = await repo.checkpoints.current(taskId, id);
  // A compacted node is a stub, so the lineage of what is kept still reaches its root.
  if (loaded === undefined) return { id, taskId, agentId: '', iteration: 0, status: 'active', createdAt: '', compacted: true };
  // A corrupt node is still shown, without content, so the chain stays visible.
  if (!loaded.ok) return { id, taskId, agentId: '', iteration: 0, status: 'active', createdAt: '' };
  const c = loaded.doc.checkpoint;
  const n: LineageNode = { id, taskId, agentId: c.agentId, iteration: c.iteration, status: c.status, createdAt: c.createdAt };
  if (c.agentType) n.agentType = c.agentType;
  if (c.executionState.phase) n.phase = c.executionState.phase;
  return n;
}
