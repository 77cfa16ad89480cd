/**
 * Changing checkpoints: create, update (JSON Merge Patch under optimistic
 * locking), finalize and link. The expensive part of a write, canonical JSON
 * and its hash, is computed before the transaction against the version just
 * read; the transaction then checks that this version is still current, so
 * the single writer is held for microseconds.
 *
 * @module
 */
import { SCHEMA_VERSION, type Checkpoint, type CheckpointInput, type SignatureRecord } from '../domain/checkpoint.js';
import { newId } from '../domain/ids.js';
import { AppError } from '../errors.js';
import { encodeValue, readRecord, writeNewRecord, writeRecord } from '../store/keyspace.js';
import type { Actor, ServiceContext, WriteOptions } from './context.js';
import { updateIndexes } from './indexes.js';
import { getCheckpoint, taskOf } from './reads.js';
import { toStored, verifyStored, type StoredCheckpoint } from './records.js';
import { writeTask, type TaskWrite } from './task-write.js';

/** What a write answers: the checkpoint as written, and whether this is a replayed answer. */
export interface WriteResult {
  checkpoint: Checkpoint;
  replayed: boolean;
}

/** What a write records for its operation; a replay reads that version back. */
interface Written {
  checkpointId: string;
  version: number;
}

export function buildCheckpoint(input: CheckpointInput, id: string, now: string): Checkpoint {
  const compliance: Checkpoint['compliance'] = {};
  if (input.compliance?.eventLogRef !== undefined) compliance.eventLogRef = input.compliance.eventLogRef;
  if (input.compliance?.retentionPolicy !== undefined) compliance.retentionPolicy = input.compliance.retentionPolicy;
  if (input.compliance?.legalHold !== undefined) compliance.legalHold = input.compliance.legalHold;
  const checkpoint: Checkpoint = {
    id,
    taskId: input.taskId,
    agentId: input.agentId,
    iteration: input.iteration ?? 1,
    schemaVersion: SCHEMA_VERSION,
    status: 'active',
    version: 1,
    createdAt: now,
    updatedAt: now,
    executionState: input.executionState ?? {},
    contextSummary: input.contextSummary ?? {},
    metrics: input.metrics ?? {},
    recovery: input.recovery ?? {},
    compliance,
    labels: input.labels ?? {},
    extensions: input.extensions ?? {},
  };
  if (input.agentType !== undefined) checkpoint.agentType = input.agentType;
  if (input.parentId !== undefined) checkpoint.parentId = input.parentId;
  return checkpoint;
}

function sized(ctx: ServiceContext, checkpoint: Checkpoint): ReturnType<typeof toStored> {
  const prepared = toStored(checkpoint);
  if (prepared.bytes > ctx.maxCheckpointBytes) {
    throw new AppError('payload_too_large', { detail: `The checkpoint encodes to ${prepared.bytes} bytes; the limit is ${ctx.maxCheckpointBytes}.` });
  }
  ctx.metrics.checkpointSize.observe(prepared.bytes);
  return prepared;
}

/** Creates a checkpoint, linked to `parentId` in the same transaction when given. */
export async function createCheckpoint(
  ctx: ServiceContext,
  actor: Actor,
  input: CheckpointInput,
  options: WriteOptions & { checkpointId?: string },
): Promise<WriteResult> {
  const started = performance.now();
  const id = options.checkpointId ?? newId();
  const checkpoint = buildCheckpoint(input, id, ctx.now().toISOString());
  const { stored, hash } = sized(ctx, checkpoint);

  const { result, replayed } = await writeTask<Written>(ctx, actor, { ...options, action: 'create' }, input.taskId, async (write) => {
    const { tx, ks, head } = write;
    if (input.parentId !== undefined) {
      if ((await taskOf(tx, ks, input.parentId)) === undefined) {
        throw new AppError('validation_failed', { errors: [{ field: 'parentId', message: 'no checkpoint with this id exists' }] });
      }
      tx.set(ks.parents.pack(id), encodeValue(input.parentId));
      tx.set(ks.links.pack(input.parentId, id), Buffer.alloc(0));
    }
    writeNewRecord(tx, ks.checkpoints, [input.taskId, id], stored);
    tx.set(ks.ids.pack(id), encodeValue(input.taskId));
    head.seq += 1;
    head.latestId = id;
    tx.set(ks.history.pack(input.taskId, head.seq), encodeValue(id));
    updateIndexes(tx, ks.index, undefined, checkpoint);
    write.audit({ action: 'checkpoint.created', checkpointId: id, version: 1, afterHash: hash, agentId: input.agentId, ...(input.parentId ? { details: { parentId: input.parentId } } : {}) });
    write.event({ type: 'CHECKPOINT_CREATED', subject: id, data: summary(checkpoint, hash) });
    if (input.parentId !== undefined) {
      write.event({ type: 'CHECKPOINTS_LINKED', subject: id, data: { parentId: input.parentId, childId: id } });
    }
    return { checkpointId: id, version: 1 };
  });
  ctx.metrics.checkpointWriteLatency.observe({ operation: 'create' }, performance.now() - started);
  ctx.log.info({ tenant: actor.tenant, taskId: input.taskId, checkpointId: result.checkpointId, replayed }, 'checkpoint created');
  if (!replayed) return { checkpoint: { ...checkpoint, compliance: { ...checkpoint.compliance, hash } }, replayed };
  return { checkpoint: (await getCheckpoint(ctx, actor, result.checkpointId, result.version)).checkpoint, replayed };
}

export function summary(checkpoint: Checkpoint, hash: string): Record<string, unknown> {
  return {
    checkpointId: checkpoint.id,
    version: checkpoint.version,
    hash,
    agentId: checkpoint.agentId,
    ...(checkpoint.agentType ? { agentType: checkpoint.agentType } : {}),
    ...(checkpoint.executionState.phase ? { phase: checkpoint.executionState.phase } : {}),
    status: checkpoint.status,
  };
}

/**
 * The shared shape of every change to an existing checkpoint: read it,
 * compute the next version outside the transaction, then write it if the
 * version read is still current. When another write got there first, the
 * next version is computed again inside the transaction from what is current
 * then (writes to one task are serialized, so this always makes progress),
 * unless If-Match named the version read, which makes it a 412. Refusals are
 * raised inside the transaction, after the idempotency check, so a retried
 * request still gets its first answer.
 */
export async function changeCheckpoint(
  ctx: ServiceContext,
  actor: Actor,
  checkpointId: string,
  options: WriteOptions & { action: string; ifMatch?: number },
  prepare: (current: Checkpoint, now: string) => Checkpoint,
  apply: (write: TaskWrite, before: Checkpoint, after: Checkpoint, hash: string) => Promise<void>,
  sign?: (hash: string) => SignatureRecord,
): Promise<WriteResult> {
  const started = performance.now();
  const plan = (current: Checkpoint): { next: Checkpoint; prepared: ReturnType<typeof toStored> } => {
    if (current.status === 'finalized') throw new AppError('checkpoint_finalized', { extra: { checkpointId } });
    if (options.ifMatch !== undefined && options.ifMatch !== current.version) {
      throw new AppError('version_conflict', { extra: { currentVersion: current.version } });
    }
    const now = ctx.now().toISOString();
    const next = prepare(current, now);
    next.version = current.version + 1;
    next.updatedAt = now;
    const prepared = sized(ctx, next);
    if (sign) {
      // The signature covers the hash, so it is made after hashing and kept beside the content.
      next.compliance.signature = sign(prepared.hash);
      prepared.stored.s = next.compliance.signature;
    }
    return { next, prepared };
  };

  const read = (await getCheckpoint(ctx, actor, checkpointId)).checkpoint;
  let planned: ReturnType<typeof plan> | undefined;
  let refusal: unknown;
  try {
    planned = plan(read);
  } catch (error) {
    refusal = error;
  }

  let written: { before: Checkpoint; next: Checkpoint; hash: string } | undefined;
  const { result, replayed } = await writeTask<Written>(ctx, actor, options, read.taskId, async (write) => {
    const raw = await readRecord<StoredCheckpoint>(write.tx, write.ks.checkpoints, [read.taskId, checkpointId]);
    let current = read;
    let step = planned;
    if (raw?.h !== read.compliance.hash) {
      const verified = verifyStored(raw);
      if (!verified.ok) throw new AppError('checkpoint_corrupted', { extra: { checkpointId } });
      current = verified.doc.checkpoint;
      step = plan(current);
    } else if (refusal !== undefined) {
      throw refusal;
    }
    const { next, prepared } = step!;
    writeNewRecord(write.tx, write.ks.revisions, [checkpointId, current.version], raw);
    await writeRecord(write.tx, write.ks.checkpoints, [current.taskId, checkpointId], prepared.stored);
    updateIndexes(write.tx, write.ks.index, current, next);
    await apply(write, current, next, prepared.hash);
    write.audit({ action: options.action, checkpointId, version: next.version, beforeHash: current.compliance.hash, afterHash: prepared.hash, agentId: next.agentId });
    written = { before: current, next, hash: prepared.hash };
    return { checkpointId, version: next.version };
  });
  ctx.metrics.checkpointWriteLatency.observe({ operation: options.action }, performance.now() - started);
  ctx.log.info({ tenant: actor.tenant, taskId: read.taskId, checkpointId, version: result.version, action: options.action, replayed }, 'checkpoint changed');
  if (!replayed && written !== undefined) {
    const { next, hash } = written;
    return { checkpoint: { ...next, compliance: { ...next.compliance, hash } }, replayed };
  }
  return { checkpoint: (await getCheckpoint(ctx, actor, result.checkpointId, result.version)).checkpoint, replayed };
}
