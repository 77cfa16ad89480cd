/**
 * The pure rules of every change to a checkpoint: building a new one, merging
 * a patch into one, finalizing it and linking it to a parent. Each rule
 * returns the next checkpoint or a refusal (a stable code with the fields at
 * fault); the service turns refusals into errors and stores what passes.
 *
 * @module
 */
import { checkpointInput, SCHEMA_VERSION, READ_ONLY_FIELDS, type Checkpoint, type CheckpointInput, type FinalStatus } from './checkpoint.js';
import { applyMergePatch } from './merge-patch.js';

/** One offending field: where it is, and what is wrong with it. */
export interface FieldProblem {
  field: string;
  message: string;
}

export type Refusal =
  | { code: 'validation_failed'; errors: FieldProblem[] }
  | { code: 'checkpoint_finalized' }
  | { code: 'version_conflict'; currentVersion: number }
  | { code: 'already_linked'; parentId: string }
  | { code: 'link_cycle' };

export type Ruled = { ok: true; next: Checkpoint } | { ok: false; refusal: Refusal };

/** A new checkpoint at version 1 from what a client sent. */
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
  if (input.codeVersion !== undefined) checkpoint.codeVersion = input.codeVersion;
  if (input.parentId !== undefined) checkpoint.parentId = input.parentId;
  return checkpoint;
}

/**
 * What every change to an existing checkpoint must satisfy first: it is
 * still active, and If-Match (when sent) names its current version.
 */
export function changeable(current: Checkpoint, ifMatch: number | undefined): Refusal | undefined {
  if (current.status === 'finalized') return { code: 'checkpoint_finalized' };
  if (ifMatch !== undefined && ifMatch !== current.version) return { code: 'version_conflict', currentVersion: current.version };
  return undefined;
}

/** The next version of `next`, changed at `now`. */
export function nextVersion(current: Checkpoint, next: Checkpoint, now: string): Checkpoint {
  next.version = current.version + 1;
  next.updatedAt = now;
  return next;
}

/** What a merged checkpoint must satisfy: a new checkpoint's rules, without `parentId` (links set it). */
const editableSchema = checkpointInput.omit({ parentId: true });

/** Applies a JSON Merge Patch and validates the result; read-only fields must keep their value. */
export function mergePatch(current: Checkpoint, patch: unknown): Ruled {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    return invalid([{ field: 'body', message: 'a merge patch must be a JSON object' }]);
  }
  const errors: FieldProblem[] = [];
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
  const merged = applyMergePatch({ ...rest, compliance }, stripped) as Record<string, unknown>;
  const { id: _id, schemaVersion: _sv, status: _st, finalStatus: _fs, version: _v, createdAt: _c, updatedAt: _u, finalizedAt: _f, parentId: _p, ...editable } = merged;
  const parsed = editableSchema.safeParse(editable);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) errors.push({ field: issue.path.join('.') || 'body', message: issue.message });
  }
  if (errors.length > 0 || !parsed.success) return invalid(errors);
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
  if (data.codeVersion !== undefined) next.codeVersion = data.codeVersion;
  else delete next.codeVersion;
  return { ok: true, next };
}

/** The checkpoint finalized with `status`; it is immutable afterwards. */
export function finalize(current: Checkpoint, status: FinalStatus, now: string): Ruled {
  return { ok: true, next: { ...structuredClone(current), status: 'finalized', finalStatus: status, finalizedAt: now } };
}

/** The child with `parentId` as its one parent; a checkpoint cannot be its own parent. */
export function linkTo(child: Checkpoint, parentId: string): Ruled {
  if (child.parentId !== undefined) return { ok: false, refusal: { code: 'already_linked', parentId: child.parentId } };
  if (parentId === child.id) return { ok: false, refusal: { code: 'link_cycle' } };
  return { ok: true, next: { ...structuredClone(child), parentId } };
}

function invalid(errors: FieldProblem[]): Ruled {
  return { ok: false, refusal: { code: 'validation_failed', errors } };
}
