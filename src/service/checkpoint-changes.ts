/**
 * The three changes to an existing checkpoint: a merge patch, finalization
 * and a link to a parent, each one `changeCheckpoint` with its own rules.
 *
 * @module
 */
import { checkpointInput, FINAL_STATUSES, READ_ONLY_FIELDS, type Checkpoint } from '../domain/checkpoint.js';
import { applyMergePatch } from '../domain/merge-patch.js';
import { AppError, type FieldError } from '../errors.js';
import { decodeValue, encodeValue } from '../store/keyspace.js';
import type { Actor, ServiceContext, WriteOptions } from './context.js';
import { changeCheckpoint, summary, type WriteResult } from './mutations.js';
import { taskOf } from './reads.js';
import type { Signer } from './signing.js';

/** PATCH /v1/checkpoints/:id: JSON Merge Patch against the version named in If-Match. */
export function patchCheckpoint(
  ctx: ServiceContext,
  actor: Actor,
  checkpointId: string,
  patch: unknown,
  options: WriteOptions & { ifMatch?: number },
): Promise<WriteResult> {
  return changeCheckpoint(
    ctx,
    actor,
    checkpointId,
    { ...options, action: 'checkpoint.updated' },
    (current) => mergeChecked(current, patch),
    async (write, _before, after, hash) => {
      write.event({ type: 'CHECKPOINT_UPDATED', subject: after.id, data: summary(after, hash) });
    },
  );
}

/** What a merged checkpoint must satisfy: a new checkpoint's rules, without `parentId` (links set it). */
const editableSchema = checkpointInput.omit({ parentId: true });

/** Applies a merge patch and validates the result; read-only fields must keep their value. */
export function mergeChecked(current: Checkpoint, patch: unknown): Checkpoint {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw new AppError('validation_failed', { errors: [{ field: 'body', message: 'a merge patch must be a JSON object' }] });
  }
  const errors: FieldError[] = [];
  // A client may send read-only fields back unchanged (a whole document as a patch); changing them is refused.
  const patchCompliance = (patch as { compliance?: unknown }).compliance;
  const { compliance: complianceWithHash, ...rest } = current;
  const { hash, signature, ...compliance } = complianceWithHash;
  const sealed: Record<string, unknown> = { hash, signature };
  const stripped: Record<string, unknown> = { ...(patch as Record<string, unknown>) };
  if (typeof patchCompliance === 'object' && patchCompliance !== null && !Array.isArray(patchCompliance)) {
    const inner: Record<string, unknown> = { ...(patchCompliance as Record<string, unknown>) };
    for (const field of ['hash', 'signature']) {
      if (!(field in inner)) continue;
      if (JSON.stringify(inner[field]) !== JSON.stringify(sealed[field])) errors.push({ field: `compliance.${field}`, message: 'is set by the service and cannot be changed' });
      delete inner[field];
    }
    stripped.compliance = inner;
  }
  for (const field of READ_ONLY_FIELDS) {
    if (field.includes('.') || !(field in stripped)) continue;
    if (JSON.stringify(stripped[field]) !== JSON.stringify((rest as Record<string, unknown>)[field])) {
      errors.push({ field, message: 'is set by the service and cannot be changed' });
    }
    delete stripped[field];
  }
  const base = { ...rest, compliance };
  const merged = applyMergePatch(base, stripped) as Record<string, unknown>;
  const { id: _id, schemaVersion: _sv, status: _st, finalStatus: _fs, version: _v, createdAt: _c, updatedAt: _u, finalizedAt: _f, parentId: _p, ...editable } = merged;
  const parsed = editableSchema.safeParse(editable);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) errors.push({ field: issue.path.join('.') || 'body', message: issue.message });
  }
  if (errors.length > 0 || !parsed.success) throw new AppError('validation_failed', { errors });
  const data = parsed.data;
  const next: Checkpoint = {
    ...rest,
    agentId: data.agentId,
    taskId: current.taskId,
    iteration: data.iteration ?? current.iteration,
    executionState: data.executionState ?? {},
    contextSummary: data.contextSummary ?? {},
    metrics: data.metrics ?? {},
    recovery: data.recovery ?? {},
    compliance: { ...(data.compliance ?? {}) },
    labels: data.labels ?? {},
    extensions: data.extensions ?? {},
  };
  if (data.agentType !== undefined) next.agentType = data.agentType;
  else delete next.agentType;
  return next;
}

export interface FinalizeRequest {
  status: (typeof FINAL_STATUSES)[number];
  signature?: { meaning: string };
}

/** POST /v1/checkpoints/:id/finalize: the checkpoint becomes immutable. */
export function finalizeCheckpoint(
  ctx: ServiceContext,
  actor: Actor,
  signer: Signer | undefined,
  checkpointId: string,
  request: FinalizeRequest,
  options: WriteOptions & { ifMatch?: number },
): Promise<WriteResult> {
  if (request.signature && signer === undefined) {
    throw new AppError('validation_failed', {
      errors: [{ field: 'signature', message: 'signing is not configured on this service (set BATON_SIGNING_KEY_FILE)' }],
    });
  }
  return changeCheckpoint(
    ctx,
    actor,
    checkpointId,
    { ...options, action: 'checkpoint.finalized' },
    (current, now) => ({ ...structuredClone(current), status: 'finalized', finalStatus: request.status, finalizedAt: now }),
    async (write, _before, after, hash) => {
      write.event({ type: 'CHECKPOINT_FINALIZED', subject: after.id, data: { ...summary(after, hash), finalStatus: request.status } });
    },
    request.signature && signer ? (hash) => signer.sign(hash, actor.subject, request.signature!.meaning) : undefined,
  );
}

/** POST /v1/checkpoints/:id/links: `childId` gets `parentId` as its one parent. */
export async function linkCheckpoints(
  ctx: ServiceContext,
  actor: Actor,
  parentId: string,
  childId: string,
  options: WriteOptions,
): Promise<WriteResult> {
  return changeCheckpoint(
    ctx,
    actor,
    childId,
    { ...options, action: 'checkpoints.linked' },
    (current) => {
      if (current.parentId !== undefined) throw new AppError('already_linked', { extra: { parentId: current.parentId } });
      if (parentId === childId) throw new AppError('link_cycle');
      return { ...structuredClone(current), parentId };
    },
    async (write) => {
      const { tx, ks } = write;
      if ((await taskOf(tx, ks, parentId)) === undefined) throw new AppError('not_found', { detail: 'The parent checkpoint does not exist.' });
      if ((await tx.get(ks.parents.pack(childId))) !== undefined) throw new AppError('already_linked');
      // Walk up from the parent: meeting the child there would close a cycle.
      let cursor: string | undefined = parentId;
      for (let steps = 0; cursor !== undefined && steps < 100_000; steps++) {
        if (cursor === childId) throw new AppError('link_cycle');
        const up = await tx.get(ks.parents.pack(cursor));
        cursor = up === undefined ? undefined : decodeValue<string>(up);
      }
      tx.set(ks.parents.pack(childId), encodeValue(parentId));
      tx.set(ks.links.pack(parentId, childId), Buffer.alloc(0));
      write.event({ type: 'CHECKPOINTS_LINKED', subject: childId, data: { parentId, childId } });
    },
  );
}
