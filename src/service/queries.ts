/**
 * Reading a task's checkpoints: latest, history, and a checkpoint's
 * revisions and lineage. Corrupt records are skipped, reported once, and
 * named in the answer.
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import { AppError } from '../errors.js';
import { decodeValue, readRecord } from '../store/keyspace.js';
import { snapshot, type Actor, type ServiceContext } from './context.js';
import { decodeCursor, encodeCursor, type Page } from './cursor.js';
import { loadCurrent, reportCorruption, taskOf, type Corruption } from './reads.js';
import { verifyStored, type CheckpointDoc, type StoredCheckpoint } from './records.js';
import { keyspaceOf, readHead } from './task-write.js';

export interface Listed<T> extends Page<T> {
  /** Checkpoints skipped because they failed verification. */
  corrupted?: string[];
}

const isSeqCursor = (value: unknown): value is { s: number } =>
  typeof value === 'object' && value !== null && Number.isSafeInteger((value as { s?: unknown }).s);

/** A task's checkpoints, newest first. */
export async function taskHistory(ctx: ServiceContext, actor: Actor, taskId: string, limit: number, cursor?: string): Promise<Listed<CheckpointDoc>> {
  const started = performance.now();
  const ks = keyspaceOf(actor.tenant);
  const position = decodeCursor(cursor, isSeqCursor);
  const { items, corrupt, last, more } = await snapshot(ctx, async (tx) => {
    const head = await readHead(tx, ks, taskId);
    if (head === undefined) return undefined;
    const { begin } = ks.history.range(taskId);
    const end = position === undefined ? ks.history.range(taskId).end : ks.history.pack(taskId, position.s);
    const rows = await tx.getRange(begin, end, { limit: limit + 1, reverse: true });
    const page = rows.slice(0, limit);
    const items: CheckpointDoc[] = [];
    const corrupt: Corruption[] = [];
    for (const row of page) {
      const id = decodeValue<string>(row.value);
      const loaded = await loadCurrent(tx, ks, taskId, id);
      if (loaded === undefined) continue;
      if (loaded.ok) items.push(loaded.doc);
      else corrupt.push(loaded.corruption);
    }
    const lastRow = page[page.length - 1];
    return { items, corrupt, last: lastRow ? (ks.history.unpack(lastRow.key)[1] as number) : undefined, more: rows.length > limit };
  }).then((r) => {
    if (r === undefined) throw new AppError('not_found', { detail: 'No task with this id exists.' });
    return r;
  });
  ctx.metrics.checkpointReadLatency.observe({ operation: 'history' }, performance.now() - started);
  for (const c of corrupt) await reportCorruption(ctx, actor, c);
  const page: Listed<CheckpointDoc> = { items };
  if (more && last !== undefined) page.nextCursor = encodeCursor({ s: last });
  if (corrupt.length > 0) page.corrupted = corrupt.map((c) => c.checkpointId);
  return page;
}

/** The newest checkpoint of a task whose hash verifies; the corrupt ones before it are named. */
export async function latestCheckpoint(ctx: ServiceContext, actor: Actor, taskId: string): Promise<{ checkpoint: CheckpointDoc; skipped: string[] }> {
  const started = performance.now();
  const ks = keyspaceOf(actor.tenant);
  const found = await snapshot(ctx, async (tx) => {
    const head = await readHead(tx, ks, taskId);
    if (head === undefined) return undefined;
    const corrupt: Corruption[] = [];
    const { begin, end } = ks.history.range(taskId);
    let upper = end;
    for (;;) {
      const rows = await tx.getRange(begin, upper, { limit: 20, reverse: true });
      for (const row of rows) {
        const loaded = await loadCurrent(tx, ks, taskId, decodeValue<string>(row.value));
        if (loaded === undefined) continue;
        if (loaded.ok) return { checkpoint: loaded.doc, corrupt };
        corrupt.push(loaded.corruption);
      }
      if (rows.length < 20) return { checkpoint: undefined, corrupt };
      upper = rows[rows.length - 1]!.key;
    }
  });
  ctx.metrics.checkpointReadLatency.observe({ operation: 'latest' }, performance.now() - started);
  if (found === undefined) throw new AppError('not_found', { detail: 'No task with this id exists.' });
  for (const c of found.corrupt) await reportCorruption(ctx, actor, c);
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
  const ks = keyspaceOf(actor.tenant);
  const items = await snapshot(ctx, async (tx) => {
    const taskId = await taskOf(tx, ks, checkpointId);
    if (taskId === undefined) return undefined;
    const infos: RevisionInfo[] = [];
    const seen = new Set<number>();
    const rows = await tx.getPrefix(ks.revisions.pack(checkpointId));
    for (const row of rows) {
      const [, version] = ks.revisions.unpack(row.key) as [string, number, number];
      if (seen.has(version)) continue;
      seen.add(version);
      infos.push(info(await readRecord<StoredCheckpoint>(tx, ks.revisions, [checkpointId, version]).catch(() => undefined), version));
    }
    infos.push(info(await readRecord<StoredCheckpoint>(tx, ks.checkpoints, [taskId, checkpointId]).catch(() => undefined), undefined));
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

/** Ancestors (nearest first, up to the root) and children of a checkpoint. */
export async function checkpointLineage(ctx: ServiceContext, actor: Actor, checkpointId: string): Promise<{ checkpointId: string; ancestors: LineageNode[]; children: LineageNode[] }> {
  const ks = keyspaceOf(actor.tenant);
  const result = await snapshot(ctx, async (tx) => {
    const node = async (id: string): Promise<LineageNode | undefined> => {
      const taskId = await taskOf(tx, ks, id);
      if (taskId === undefined) return undefined;
      const loaded = await loadCurrent(tx, ks, taskId, id);
      if (loaded === undefined || !loaded.ok) return { id, taskId, agentId: '', iteration: 0, status: 'active', createdAt: '' };
      const c = loaded.doc.checkpoint;
      const n: LineageNode = { id, taskId, agentId: c.agentId, iteration: c.iteration, status: c.status, createdAt: c.createdAt };
      if (c.agentType) n.agentType = c.agentType;
      if (c.executionState.phase) n.phase = c.executionState.phase;
      return n;
    };
    if ((await taskOf(tx, ks, checkpointId)) === undefined) return undefined;
    const ancestors: LineageNode[] = [];
    const seen = new Set([checkpointId]);
    let up = await tx.get(ks.parents.pack(checkpointId));
    while (up !== undefined && ancestors.length < 10_000) {
      const parentId = decodeValue<string>(up);
      if (seen.has(parentId)) break;
      seen.add(parentId);
      const n = await node(parentId);
      if (n === undefined) break;
      ancestors.push(n);
      up = await tx.get(ks.parents.pack(parentId));
    }
    const children: LineageNode[] = [];
    for (const row of await tx.getRange(ks.links.range(checkpointId).begin, ks.links.range(checkpointId).end, { limit: 10_000 })) {
      const childId = ks.links.unpack(row.key)[1] as string;
      const n = await node(childId);
      if (n) children.push(n);
    }
    return { checkpointId, ancestors, children };
  });
  if (result === undefined) throw new AppError('not_found');
  return result;
}
