/**
 * The handlers of checkpoint commands: create, update (JSON Merge Patch),
 * finalize, link, and the record of a corruption. The expensive part of a
 * write, canonical JSON and its hash, is computed before the transaction
 * against the version just read; inside the task transaction the handler
 * checks that this version is still current, so the single writer is held
 * for microseconds. Answers are made from the stored canonical text.
 *
 * @module
 */
import { buildCheckpoint, type Refusal } from '../domain/changes.js';
import type { Checkpoint, SignatureRecord } from '../domain/checkpoint.js';
import { applyChange, type ChangeCommand, type CommandBase, type CreateCheckpoint, type FinalizeCheckpoint, type LinkCheckpoints, type RecordCorruption, type UpdateCheckpoint } from '../domain/commands.js';
import { stateAfterFinalize } from '../domain/task-state.js';
import { AppError } from '../errors.js';
import { getCheckpoint } from './checkpoint-reads.js';
import type { ServiceContext } from './context.js';
import { CheckpointDoc, comparePositions, compressAhead, rethrowMissingKey, toStored, verifyStored, type IndexPosition, type Repository, type StoredCheckpoint, type TaskHead } from './repository/repository.js';
import { present } from './invariants.js';
import { runInTask, type TaskWrite } from './task-transaction.js';

/** What a write answers: the checkpoint as stored, and whether this repeats a first answer. */
export interface WriteResult {
  doc: CheckpointDoc;
  checkpointId: string;
  version: number;
  /** Ids the change recorded besides the checkpoint's (a handoff's id). */
  extra: Record<string, string>;
  replayed: boolean;
}

/** What a write records with its operation; a repeat reads that version back. */
interface Written {
  checkpointId: string;
  version: number;
  extra?: Record<string, string>;
}

export interface Prepared {
  stored: StoredCheckpoint;
  hash: string;
}

/** The stored form of `checkpoint`, refused when it is larger than the configured limit. */
export function prepare(ctx: ServiceContext, checkpoint: Checkpoint): Prepared {
  const { stored, hash, bytes } = toStored(checkpoint);
  if (bytes > ctx.maxCheckpointBytes) {
    throw new AppError('payload_too_large', { detail: `The checkpoint encodes to ${bytes} bytes; the limit is ${ctx.maxCheckpointBytes}.` });
  }
  ctx.metrics.checkpointSize.observe(bytes);
  return { stored, hash };
}

/** Creates in progress in this process: one that finds others has its record compressed on the compression thread. */
let creating = 0;

export async function createCheckpoint(ctx: ServiceContext, command: CreateCheckpoint): Promise<WriteResult> {
  creating += 1;
  try {
    return await create(ctx, command);
  } finally {
    creating -= 1;
  }
}

async function create(ctx: ServiceContext, command: CreateCheckpoint): Promise<WriteResult> {
  const { input, checkpointId: id, taskId } = command;
  const built = buildCheckpoint(input, id, command.at);
  const first = prepare(ctx, built);
  // Alone, compressing here answers sooner; beside other creates, this thread has their work to do meanwhile.
  if (creating > 1) await compressAhead(first.stored);
  let written: Prepared = first;
  const { result, replayed } = await runInTask<Written>(ctx, command, taskId, async (write) => {
    const { repo, head } = write;
    // The id is minted with the command (`http/routes/checkpoints.ts`, the MCP tool, the formats route): only a queued
    // create's replay or a later run of this body can find it written already.
    if (!write.firstRun && (await alreadyCreated(repo, taskId, id, first.hash))) {
      write.unchanged();
      return { checkpointId: id, version: 1 };
    }
    if (input.parentId !== undefined) {
      if ((await repo.checkpoints.taskOf(input.parentId)) === undefined) {
        throw new AppError('validation_failed', { errors: [{ field: 'parentId', message: 'no checkpoint with this id exists' }] });
      }
      repo.links.link(input.parentId, id);
    }
    // A queued create keeps what its 202 promised; a live one is placed after the task's newest.
    const placed = command.fromQueue === true ? await placeAccepted(repo, head, built, first) : { ...(await placeNewest(ctx, repo, head, built, first)), earlier: false };
    const { checkpoint, prepared } = placed;
    head.seq += 1;
    // New work reopens a finished or paused task; a handoff waits for its acknowledgment.
    if (head.state !== 'handing-off') head.state = 'working';
    if (placed.earlier) await repo.checkpoints.insertEarlier(checkpoint, prepared.stored, head.seq);
    else {
      head.latestId = id;
      head.latestAt = checkpoint.createdAt;
      // Alone, the index entries a merge can write wait for it: in this commit each would be a leaf of its own.
      await repo.checkpoints.insert(checkpoint, prepared.stored, head.seq, placed.previous, creating === 1);
    }
    write.audit({ action: 'checkpoint.created', checkpointId: id, version: 1, afterHash: prepared.hash, agentId: input.agentId, ...(input.parentId ? { details: { parentId: input.parentId } } : {}) });
    write.event({ type: 'CHECKPOINT_CREATED', subject: id, data: summary(checkpoint, prepared.hash) });
    if (input.parentId !== undefined) write.event({ type: 'CHECKPOINTS_LINKED', subject: id, data: { parentId: input.parentId, childId: id } });
    written = prepared;
    return { checkpointId: id, version: 1 };
  });
  ctx.log.info({ tenant: command.actor.tenant, taskId, checkpointId: result.checkpointId, agentId: input.agentId, replayed }, 'checkpoint created');
  return answer(ctx, command, result, replayed, replayed ? undefined : written.stored);
}

/**
 * A new checkpoint placed after its task's newest. `createdAt` rises
 * strictly along a task, so the `task` index holds a task's checkpoints in
 * the order they were written (full-text runs rely on it, `terms.ts`). A
 * checkpoint whose time is not after the newest one's (two writers within a
 * millisecond, a clock stepped back) takes the millisecond after it, and is
 * hashed again; otherwise the one made before the transaction stands.
 */
export async function placeNewest(
  ctx: ServiceContext,
  repo: Repository,
  head: TaskHead,
  checkpoint: Checkpoint,
  prepared: Prepared,
): Promise<{ checkpoint: Checkpoint; prepared: Prepared; previous: IndexPosition | undefined }> {
  const previous = await newestOf(repo, head);
  const after = previous === undefined ? NaN : Date.parse(previous.createdAt);
  if (previous === undefined || previous.createdAt < checkpoint.createdAt || Number.isNaN(after)) return { checkpoint, prepared, previous };
  const at = new Date(after + 1).toISOString();
  const moved: Checkpoint = { ...checkpoint, createdAt: at, updatedAt: at };
  return { checkpoint: moved, prepared: prepare(ctx, moved), previous };
}

/**
 * A create the write queue accepted keeps the id, hash and `createdAt` its
 * 202 promised, whatever other instances wrote meanwhile (DESIGN §10): a
 * task's latest is its newest by acceptance. Accepted after the task's
 * newest, it is the newest; accepted before (another instance wrote the task
 * while this one's store was cut off), it takes its place among the older
 * ones, `earlier`, and the newest stays the newest.
 */
async function placeAccepted(
  repo: Repository,
  head: TaskHead,
  checkpoint: Checkpoint,
  prepared: Prepared,
): Promise<{ checkpoint: Checkpoint; prepared: Prepared; previous: IndexPosition | undefined; earlier: boolean }> {
  const previous = await newestOf(repo, head);
  // Two accepted in one millisecond are told apart by their ids, minted in acceptance order, as the index does.
  const earlier = previous !== undefined && comparePositions(previous, { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id }) > 0;
  return { checkpoint, prepared, previous, earlier };
}

/**
 * The task's newest checkpoint as its head names it. A head written before
 * `latestAt` was kept reads the record; an unreadable one (reported by
 * reads, not here) leaves the new checkpoint's time as it is.
 */
async function newestOf(repo: Repository, head: TaskHead): Promise<IndexPosition | undefined> {
  if (head.latestId === undefined) return undefined;
  if (head.latestAt !== undefined) return { createdAt: head.latestAt, checkpointId: head.latestId };
  try {
    const raw = await repo.checkpoints.raw(head.taskId, head.latestId);
    const createdAt = raw === undefined ? undefined : (JSON.parse(raw.c) as Partial<Checkpoint>).createdAt;
    return typeof createdAt === 'string' ? { createdAt, checkpointId: head.latestId } : undefined;
  } catch (error) {
    rethrowMissingKey(error);
    return undefined;
  }
}

/**
 * Whether checkpoint `id` already exists as this create makes it: the same
 * create applied before, whose operation record has since expired (ids are
 * minted with the command, so only a repeat names an existing one). Its
 * first version's hash tells it apart from other content under the id,
 * which is refused rather than written over.
 */
async function alreadyCreated(repo: Repository, taskId: string, id: string, hash: string): Promise<boolean> {
  const owner = await repo.checkpoints.taskOf(id);
  if (owner === undefined) return false;
  if (owner !== taskId) throw new AppError('conflict', { detail: 'A checkpoint with this id already exists in another task.', extra: { checkpointId: id } });
  const first = await repo.checkpoints.firstHash(taskId, id);
  if (first === hash) return true;
  if (first === undefined) throw new AppError('checkpoint_corrupted', { detail: 'A checkpoint with this id exists but cannot be read.', extra: { checkpointId: id } });
  throw new AppError('conflict', { detail: 'A checkpoint with this id already exists with other content.', extra: { checkpointId: id } });
}

export function updateCheckpoint(ctx: ServiceContext, command: UpdateCheckpoint): Promise<WriteResult> {
  return changeCheckpoint(ctx, command, command.checkpointId, 'checkpoint.updated', {
    after: async (write, after, hash) => write.event({ type: 'CHECKPOINT_UPDATED', subject: after.id, data: summary(after, hash) }),
  });
}

export function finalizeCheckpoint(ctx: ServiceContext, command: FinalizeCheckpoint): Promise<WriteResult> {
  const { signer } = ctx;
  const meaning = command.signature?.meaning;
  if (meaning !== undefined && signer === undefined) {
    throw new AppError('validation_failed', { errors: [{ field: 'signature', message: 'signing is not configured on this service (set BATON_SIGNING_KEY_FILE)' }] });
  }
  return changeCheckpoint(ctx, command, command.checkpointId, 'checkpoint.finalized', {
    after: async (write, after, hash) => {
      // The key that signs is listed by every instance's GET /v1/keys from the moment the signature exists.
      if (meaning !== undefined && signer !== undefined) write.repo.noteSigningKey(signer.publicKey);
      write.head.state = stateAfterFinalize(command.status);
      write.event({ type: 'CHECKPOINT_FINALIZED', subject: after.id, data: { ...summary(after, hash), finalStatus: command.status } });
    },
    ...(meaning !== undefined && signer !== undefined ? { sign: (hash: string) => signer.sign(hash, command.actor.subject, meaning) } : {}),
  });
}

/** `childId` gets `parentId` as its one parent. */
export function linkCheckpoints(ctx: ServiceContext, command: LinkCheckpoints): Promise<WriteResult> {
  const { parentId, childId } = command;
  return changeCheckpoint(ctx, command, childId, 'checkpoints.linked', {
    after: async (write) => {
      const { repo } = write;
      if ((await repo.checkpoints.taskOf(parentId)) === undefined) throw new AppError('not_found', { detail: 'The parent checkpoint does not exist.' });
      if ((await repo.links.parentOf(childId)) !== undefined) throw new AppError('already_linked');
      // Walk up from the parent: meeting the child there would close a cycle. The walk keeps to the
      // transaction's read budget: a lineage deeper than one transaction can read is refused, not half checked.
      const budget = repo.budget();
      let cursor: string | undefined = parentId;
      while (cursor !== undefined) {
        if (cursor === childId) throw new AppError('link_cycle');
        if (!budget.allows(1)) throw new AppError('lineage_too_deep');
        cursor = await repo.links.parentOf(cursor);
      }
      repo.links.link(parentId, childId);
      write.event({ type: 'CHECKPOINTS_LINKED', subject: childId, data: { parentId, childId } });
    },
  });
}

/** One audit entry and one CHECKPOINT_CORRUPTED event for a record that failed verification. */
export async function recordCorruption(ctx: ServiceContext, command: RecordCorruption): Promise<{ replayed: boolean }> {
  const { taskId, checkpointId, version, reason } = command;
  const { replayed } = await runInTask(ctx, command, taskId, async (write) => {
    write.audit({ action: 'checkpoint.corrupted', checkpointId, details: { reason } });
    write.event({ type: 'CHECKPOINT_CORRUPTED', subject: checkpointId, data: { checkpointId, taskId, ...(version !== undefined ? { version } : {}), reason } });
    return null;
  });
  return { replayed };
}

export interface ChangeRules {
  /**
   * The change's own writes and events, inside the transaction, after the
   * record is written; ids it returns are recorded with the operation.
   */
  after(write: TaskWrite, after: Checkpoint, hash: string, before: Checkpoint): Promise<Record<string, string> | void>;
  /** Signs the new hash; the signature is kept beside the hashed content. */
  sign?(hash: string): SignatureRecord;
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
  command: ChangeCommand,
  checkpointId: string,
  action: string,
  rules: ChangeRules,
): Promise<WriteResult> {
  // A refusal found outside the transaction is raised inside it, after the idempotency check.
  const plan = (current: Checkpoint): { next: Checkpoint; prepared: Prepared } | { error: unknown } => {
    try {
      const ruled = applyChange(current, command);
      if (!ruled.ok) return { error: refused(ruled.refusal, checkpointId) };
      const next = ruled.next;
      const prepared = prepare(ctx, next);
      if (rules.sign) {
        next.compliance.signature = rules.sign(prepared.hash);
        prepared.stored.s = next.compliance.signature;
      }
      return { next, prepared };
    } catch (error) {
      return { error };
    }
  };

  const read = (await getCheckpoint(ctx, command.actor, checkpointId)).checkpoint;
  const planned = plan(read);
  let written: Prepared | undefined;
  const { result, replayed } = await runInTask<Written>(ctx, command, read.taskId, async (write) => {
    const { repo } = write;
    const raw = await repo.checkpoints.raw(read.taskId, checkpointId);
    let current = read;
    let step = planned;
    if (raw?.h !== read.compliance.hash) {
      const verified = verifyStored(raw);
      if (!verified.ok) throw new AppError('checkpoint_corrupted', { extra: { checkpointId } });
      current = verified.doc.checkpoint;
      step = plan(current);
    }
    if ('error' in step) throw step.error;
    const { next, prepared } = step;
    await repo.checkpoints.replace(current, present(raw, 'a checkpoint read before the transaction is still stored inside it'), next, prepared.stored, write.head.latestId === checkpointId);
    const extra = await rules.after(write, next, prepared.hash, current);
    write.audit({ action, checkpointId, version: next.version, beforeHash: current.compliance.hash, afterHash: prepared.hash, agentId: next.agentId });
    written = prepared;
    return { checkpointId, version: next.version, ...(extra ? { extra } : {}) };
  });
  ctx.log.info({ tenant: command.actor.tenant, taskId: read.taskId, checkpointId, agentId: read.agentId, version: result.version, action, replayed }, 'checkpoint changed');
  return answer(ctx, command, result, replayed, replayed ? undefined : written?.stored);
}

/** The answer from the stored text just written, or, for a repeat, the version the first write made. */
export async function answer(ctx: ServiceContext, command: CommandBase, written: Written, replayed: boolean, stored: StoredCheckpoint | undefined): Promise<WriteResult> {
  const doc = stored !== undefined ? new CheckpointDoc(stored) : await getCheckpoint(ctx, command.actor, written.checkpointId, written.version);
  return { doc, checkpointId: written.checkpointId, version: written.version, extra: written.extra ?? {}, replayed };
}

export function refused(refusal: Refusal, checkpointId: string): AppError {
  switch (refusal.code) {
    case 'validation_failed':
      return new AppError('validation_failed', { errors: refusal.errors });
    case 'checkpoint_finalized':
      return new AppError('checkpoint_finalized', { extra: { checkpointId } });
    case 'version_conflict':
      return new AppError('version_conflict', { extra: { currentVersion: refusal.currentVersion } });
    case 'already_linked':
      return new AppError('already_linked', { extra: { parentId: refusal.parentId } });
    case 'link_cycle':
      return new AppError('link_cycle');
  }
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
