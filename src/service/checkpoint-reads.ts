/**
 * Reading checkpoints: by id (any version), a task's latest and history, a
 * checkpoint's revisions and lineage. Every read verifies the hash; a record
 * that fails is never returned, and is handed to `ctx.integrity` to be
 * reported once. This module only reads.
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import type { Actor } from '../domain/commands.js';
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
    return version === undefined ? repo.checkpoints.current(taskId, checkpointId) : repo.checkpoints.version(taskId, checkpointId, version);
  });
  ctx.metrics.checkpointReadLatency.observe({ operation: 'get' }, performance.now() - started);
  if (loaded === undefined) throw new AppError('not_found');
  if (!loaded.ok) {
    await ctx.integrity.report(ctx, actor, [loaded.corruption]);
    throw new AppError('checkpoint_corrupted', { extra: { checkpointId } });
  }
  return loaded.doc;
}

const isSeqCursor = (value: unknown): value is { s: number } =>
  typeof value === 'object' && value !== null && Number.isSafeInteger((value as { s?: unknown }).s);

/** A task's checkpoints, newest first. */
export async function taskHistory(ctx: ServiceContext, actor: Actor, taskId: string, limit: number, cursor?: string): Promise<Listed<CheckpointDoc>> {
  const started = performance.now();
  const position = decodeCursor(cursor, isSeqCursor);
  const found = await snapshot(ctx, actor.tenant, async (repo) => {
    if ((await repo.tasks.head(taskId)) === undefined) return undefined;
    const entries = await repo.checkpoints.history(taskId, limit + 1, position?.s);
    const page = entries.slice(0, limit);
    const { items, corrupt } = await loadAll(repo, taskId, page.map((e) => e.checkpointId));
    return { items, corrupt, last: page[page.length - 1]?.seq, more: entries.length > limit };
  });
  ctx.metrics.checkpointReadLatency.observe({ operation: 'history' }, performance.now() - started);
  if (found === undefined) throw new AppError('not_found', { detail: NO_TASK });
  await ctx.integrity.report(ctx, actor, found.corrupt);
  const page: Listed<CheckpointDoc> = { items: found.items };
  if (found.more && found.last !== undefined) page.nextCursor = encodeCursor({ s: found.last });
  if (found.corrupt.length > 0) page.corrupted = found.corrupt.map((c) => c.checkpointId);
  return page;
}

/** The current versions of `ids` that verify, and the corrupt ones; absent ids are left out. */
async function loadAll(repo: Repository, taskId: string, ids: string[]): Promise<{ items: CheckpointDoc[]; corrupt: Corruption[] }> {
  const items: CheckpointDoc[] = [];
  const corrupt: Corruption[] = [];
  for (const id of ids) {
    const loaded = await repo.checkpoints.current(taskId, id);
    if (loaded === undefined) continue;
    if (loaded.ok) items.push(loaded.doc);
    else corrupt.push(loaded.corruption);
  }
  return { items, corrupt };
}

/** How many history entries `latestCheckpoint` reads at a time while it skips corrupt ones. */
const LATEST_BATCH = 20;

/** The newest checkpoint of a task whose hash verifies; the corrupt ones before it are named. */
export async function latestCheckpoint(ctx: ServiceContext, actor: Actor, taskId: string): Promise<{ checkpoint: CheckpointDoc; skipped: string[] }> {
  const started = performance.now();
  const found = await snapshot(ctx, actor.tenant, async (repo) => {
    if ((await repo.tasks.head(taskId)) === undefined) return undefined;
    const corrupt: Corruption[] = [];
    let before: number | undefined;
    for (;;) {
      const entries = await repo.checkpoints.history(taskId, LATEST_BATCH, before);
      for (const entry of entries) {
        const loaded = await repo.checkpoints.current(taskId, entry.checkpointId);
        if (loaded === undefined) continue;
        if (loaded.ok) return { checkpoint: loaded.doc, corrupt };
        corrupt.push(loaded.corruption);
      }
      if (entries.length < LATEST_BATCH) return { checkpoint: undefined, corrupt };
      before = entries[entries.length - 1]!.seq;
    }
  });
  ctx.metrics.checkpointReadLatency.observe({ operation: 'latest' }, performance.now() - started);
  if (found === undefined) throw new AppError('not_found', { detail: NO_TASK });
  await ctx.integrity.report(ctx, actor, found.corrupt);
  if (found.checkpoint === undefined) {
    throw new AppError('checkpoint_corrupted', { detail: 'No checkpoint of this task verifies.', extra: { corrupted: found.corrupt.map((c) => c.checkpointId) } });
  }
  return { checkpoint: found.checkpoint, skipped: found.corrupt.map((c) => c.checkpointId) };
}

export interface RevisionInfo {
  version: number;
  hash: string;
  updatedAt: string;
  status: Checkpoint['status'];
  verified: boolean;
}

/** Every version of a checkpoint, oldest first, with its hash and time. */
export async function checkpointRevisions(ctx: ServiceContext, actor: Actor, checkpointId: string): Promise<Page<RevisionInfo>> {
  const items = await snapshot(ctx, actor.tenant, async (repo) => {
    const taskId = await repo.checkpoints.taskOf(checkpointId);
    if (taskId === undefined) return undefined;
    const infos: RevisionInfo[] = [];
    for (const version of await repo.checkpoints.revisionVersions(checkpointId)) {
      infos.push(info(await repo.checkpoints.revisionRaw(checkpointId, version).catch(() => undefined), version));
    }
    infos.push(info(await repo.checkpoints.raw(taskId, checkpointId).catch(() => undefined), undefined));
    return infos.sort((a, b) => a.version - b.version);
  });
  if (items === undefined) throw new AppError('not_found');
  return { items };
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

export interface LineageNode {
  id: string;
  taskId: string;
  agentId: string;
  agentType?: string;
  iteration: number;
  status: Checkpoint['status'];
  phase?: string;
  createdAt: string;
}

/** The most ancestors and children one lineage answer lists. */
const LINEAGE_LIMIT = 10_000;

/** Ancestors (nearest first, up to the root) and children of a checkpoint. */
export async function checkpointLineage(ctx: ServiceContext, actor: Actor, checkpointId: string): Promise<{ checkpointId: string; ancestors: LineageNode[]; children: LineageNode[] }> {
  const result = await snapshot(ctx, actor.tenant, async (repo) => {
    if ((await repo.checkpoints.taskOf(checkpointId)) === undefined) return undefined;
    const ancestors: LineageNode[] = [];
    const seen = new Set([checkpointId]);
    let parentId = await repo.links.parentOf(checkpointId);
    while (parentId !== undefined && ancestors.length < LINEAGE_LIMIT && !seen.has(parentId)) {
      seen.add(parentId);
      const n = await lineageNode(repo, parentId);
      if (n === undefined) break;
      ancestors.push(n);
      parentId = await repo.links.parentOf(parentId);
    }
    const children: LineageNode[] = [];
    for (const childId of await repo.links.children(checkpointId, LINEAGE_LIMIT)) {
      const n = await lineageNode(repo, childId);
      if (n) children.push(n);
    }
    return { checkpointId, ancestors, children };
  });
  if (result === undefined) throw new AppError('not_found');
  return result;
}

async function lineageNode(repo: Repository, id: string): Promise<LineageNode | undefined> {
  const taskId = await repo.checkpoints.taskOf(id);
  if (taskId === undefined) return undefined;
  const loaded = await repo.checkpoints.current(taskId, id);
  // A corrupt node is still shown, without content, so the chain stays visible.
  if (loaded === undefined || !loaded.ok) return { id, taskId, agentId: '', iteration: 0, status: 'active', createdAt: '' };
  const c = loaded.doc.checkpoint;
  const n: LineageNode = { id, taskId, agentId: c.agentId, iteration: c.iteration, status: c.status, createdAt: c.createdAt };
  if (c.agentType) n.agentType = c.agentType;
  if (c.executionState.phase) n.phase = c.executionState.phase;
  return n;
}
