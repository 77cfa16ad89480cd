/**
 * Reading checkpoints: by id (any version), a task's latest and history,
 * revisions and lineage. Every read verifies the hash; a record that fails is
 * never returned, and is reported once with a CHECKPOINT_CORRUPTED event.
 *
 * @module
 */
import { AppError } from '../errors.js';
import { decodeValue, readRecord } from '../store/keyspace.js';
import type { Transaction } from '../store/store.js';
import { snapshot, type Actor, type ServiceContext } from './context.js';
import { verifyStored, type CheckpointDoc, type StoredCheckpoint } from './records.js';
import { keyspaceOf, writeTask, type Keyspace } from './task-write.js';

export interface Corruption {
  checkpointId: string;
  taskId: string;
  version?: number;
  reason: string;
}

export type Loaded = { ok: true; doc: CheckpointDoc; raw: StoredCheckpoint } | { ok: false; corruption: Corruption };

/** The task a checkpoint belongs to, or undefined when the id is unknown to this tenant. */
export async function taskOf(tx: Transaction, ks: Keyspace, checkpointId: string): Promise<string | undefined> {
  const value = await tx.get(ks.ids.pack(checkpointId));
  return value === undefined ? undefined : decodeValue<string>(value);
}

/** Loads and verifies the current version of a checkpoint; undefined when absent. */
export async function loadCurrent(tx: Transaction, ks: Keyspace, taskId: string, checkpointId: string): Promise<Loaded | undefined> {
  let raw: StoredCheckpoint | undefined;
  try {
    raw = await readRecord<StoredCheckpoint>(tx, ks.checkpoints, [taskId, checkpointId]);
  } catch {
    return { ok: false, corruption: { checkpointId, taskId, reason: 'unreadable record' } };
  }
  if (raw === undefined) return undefined;
  const verified = verifyStored(raw);
  if (!verified.ok) return { ok: false, corruption: { checkpointId, taskId, reason: verified.reason } };
  return { ok: true, doc: verified.doc, raw };
}

/** Loads and verifies version `version` of a checkpoint, current or earlier. */
export async function loadVersion(tx: Transaction, ks: Keyspace, taskId: string, checkpointId: string, version: number): Promise<Loaded | undefined> {
  const current = await loadCurrent(tx, ks, taskId, checkpointId);
  if (current === undefined) return undefined;
  if (current.ok && current.doc.version === version) return current;
  let raw: StoredCheckpoint | undefined;
  try {
    raw = await readRecord<StoredCheckpoint>(tx, ks.revisions, [checkpointId, version]);
  } catch {
    return { ok: false, corruption: { checkpointId, taskId, version, reason: 'unreadable record' } };
  }
  if (raw === undefined) return current.ok ? undefined : current;
  const verified = verifyStored(raw);
  if (!verified.ok) return { ok: false, corruption: { checkpointId, taskId, version, reason: verified.reason } };
  return { ok: true, doc: verified.doc, raw };
}

/**
 * Records a corruption once per damaged record: a CHECKPOINT_CORRUPTED event
 * and an audit entry. Reads stay read-only when the report itself fails.
 */
export async function reportCorruption(ctx: ServiceContext, actor: Actor, corruption: Corruption): Promise<void> {
  ctx.log.error({ ...corruption, tenant: actor.tenant }, 'checkpoint failed hash verification');
  try {
    await writeTask(
      ctx,
      actor,
      { action: 'corruption', idempotencyKey: `corrupt:${corruption.checkpointId}:${corruption.version ?? 'current'}:${corruption.reason}` },
      corruption.taskId,
      async (write) => {
        write.audit({ action: 'checkpoint.corrupted', checkpointId: corruption.checkpointId, details: { reason: corruption.reason } });
        write.event({ type: 'CHECKPOINT_CORRUPTED', subject: corruption.checkpointId, data: { ...corruption } });
        return null;
      },
    );
  } catch (error) {
    ctx.log.warn({ err: error, checkpointId: corruption.checkpointId }, 'could not record a checkpoint corruption');
  }
}

/** GET /v1/checkpoints/:id, optionally at an earlier version. */
export async function getCheckpoint(ctx: ServiceContext, actor: Actor, checkpointId: string, version?: number): Promise<CheckpointDoc> {
  const started = performance.now();
  const ks = keyspaceOf(actor.tenant);
  const loaded = await snapshot(ctx, async (tx) => {
    const taskId = await taskOf(tx, ks, checkpointId);
    if (taskId === undefined) return undefined;
    return version === undefined ? loadCurrent(tx, ks, taskId, checkpointId) : loadVersion(tx, ks, taskId, checkpointId, version);
  });
  ctx.metrics.checkpointReadLatency.observe({ operation: 'get' }, performance.now() - started);
  if (loaded === undefined) throw new AppError('not_found');
  if (!loaded.ok) {
    await reportCorruption(ctx, actor, loaded.corruption);
    throw new AppError('checkpoint_corrupted', { extra: { checkpointId } });
  }
  return loaded.doc;
}
