/**
 * Recovery after a failure. The recovery point is the newest checkpoint
 * that verifies, walking back from the task's latest along each corrupt
 * checkpoint's `lastSuccessfulState`, its parent, then the task's history,
 * as far as one transaction's read budget allows.
 * Starting a recovery fences the task at once (the failed agent's late
 * writes are refused) and announces RECOVERY_INITIATED; a circuit breaker
 * blocks a task that keeps failing (TASK_BLOCKED) instead of looping.
 * Completing it grants the recovering agent the lease (RECOVERY_COMPLETED).
 *
 * @module
 */
import type { Actor, CompleteRecovery, StartRecovery, UnblockTask } from '../domain/commands.js';
import { codeVersionClash } from '../domain/handoff.js';
import { LEASE_TTL_MS, type Lease } from '../domain/leases.js';
import { breaker, type Recovery } from '../domain/recovery.js';
import { AppError } from '../errors.js';
import { snapshot, type ServiceContext } from './context.js';
import { continuationPrompt } from './handoff.js';
import { grantLease, retire } from './leases.js';
import type { CheckpointDoc, Corruption, Repository } from './repository/repository.js';
import { present } from './invariants.js';
import { runInTask } from './task-transaction.js';

/** How many checkpoints the walk to a recovery point looks at before it gives up (escalate to a human). */
const MAX_STEPS = 1_000;
/** Keys one step of the walk may read: a history entry, the record, the hint's task, the parent link and its task. */
const KEYS_PER_STEP = 6;

export interface RecoveryPoint {
  checkpoint: CheckpointDoc | undefined;
  /** The corrupt checkpoints passed on the way, newest first. */
  corrupt: Corruption[];
}

/** The newest checkpoint of `taskId` that verifies; corrupt ones are passed, never returned. */
export async function findRecoveryPoint(repo: Repository, taskId: string): Promise<RecoveryPoint> {
  const corrupt: Corruption[] = [];
  const visited = new Set<string>();
  let historyBefore: number | undefined;
  const olderInHistory = async (): Promise<string | undefined> => {
    for (;;) {
      const [entry] = await repo.checkpoints.history(taskId, 1, historyBefore);
      if (entry === undefined) return undefined;
      historyBefore = entry.seq;
      if (!visited.has(entry.checkpointId)) return entry.checkpointId;
    }
  };
  let candidate = await olderInHistory();
  // The walk runs inside one transaction (a recovery's own): it stops where the read budget ends.
  const budget = repo.budget();
  for (let steps = 0; candidate !== undefined && steps < MAX_STEPS && budget.allows(KEYS_PER_STEP); steps++) {
    visited.add(candidate);
    const loaded = await repo.checkpoints.current(taskId, candidate);
    if (loaded?.ok) return { checkpoint: loaded.doc, corrupt };
    if (loaded !== undefined) corrupt.push(loaded.corruption);
    candidate = (await stepBack(repo, taskId, candidate, visited)) ?? (await olderInHistory());
  }
  return { checkpoint: undefined, corrupt };
}

/**
 * Where a corrupt checkpoint points back to: the `lastSuccessfulState` its
 * damaged text still names (a hint only: what it names must verify in turn),
 * else its parent, which is stored apart from the content.
 */
async function stepBack(repo: Repository, taskId: string, checkpointId: string, visited: Set<string>): Promise<string | undefined> {
  const usable = async (id: unknown): Promise<string | undefined> =>
    typeof id === 'string' && !visited.has(id) && (await repo.checkpoints.taskOf(id)) === taskId ? id : undefined;
  const raw = await repo.checkpoints.raw(taskId, checkpointId).catch(() => undefined);
  let hint: unknown;
  try {
    hint = (JSON.parse(String(raw?.c)) as { recovery?: { lastSuccessfulState?: unknown } }).recovery?.lastSuccessfulState;
  } catch {
    hint = undefined;
  }
  return (await usable(hint)) ?? (await usable(await repo.links.parentOf(checkpointId)));
}

/** GET /v1/tasks/:taskId/recovery-point; the corrupt checkpoints passed are reported. */
export async function recoveryPoint(ctx: ServiceContext, actor: Actor, taskId: string): Promise<{ checkpoint: CheckpointDoc; skipped: string[] }> {
  const found = await snapshot(ctx, actor.tenant, async (repo) => ((await repo.tasks.head(taskId)) === undefined ? undefined : findRecoveryPoint(repo, taskId)));
  if (found === undefined) throw new AppError('not_found', { detail: 'No task with this id exists.' });
  await ctx.integrity.report(ctx, actor, found.corrupt);
  const skipped = found.corrupt.map((c) => c.checkpointId);
  if (found.checkpoint === undefined) throw new AppError('checkpoint_corrupted', { detail: 'No checkpoint of this task verifies; a person must look at it.', extra: { corrupted: skipped } });
  return { checkpoint: found.checkpoint, skipped };
}

export interface RecoveryStarted {
  recovery: Recovery;
  checkpoint: CheckpointDoc | undefined;
  continuationPrompt: string | null;
  replayed: boolean;
}

/** POST /v1/tasks/:taskId/recoveries. */
export async function startRecovery(ctx: ServiceContext, command: StartRecovery): Promise<RecoveryStarted> {
  const { result, replayed } = await runInTask(ctx, command, command.taskId, async (write) => {
    const { repo, head, now } = write;
    if (head.seq === 0) throw new AppError('not_found', { detail: 'No task with this id exists.' });
    const point = await findRecoveryPoint(repo, command.taskId);
    const { recent, open } = breaker(head.recoveries ?? [], now, ctx.breaker);
    const recovery: Recovery = { id: command.recoveryId, taskId: command.taskId, status: 'initiated', reason: command.reason, failure: command.failure, createdAt: now };
    if (point.checkpoint) recovery.checkpointId = point.checkpoint.checkpoint.id;
    const blockedReason = head.blocked
      ? 'task_blocked'
      : command.failure.recoverable === false
        ? 'unrecoverable'
        : open
          ? 'circuit_open'
          : point.checkpoint === undefined
            ? 'no_verified_checkpoint'
            : undefined;
    if (blockedReason !== undefined) {
      recovery.status = 'blocked';
      recovery.blockedReason = blockedReason;
      write.audit({ action: 'recovery.blocked', ...(recovery.checkpointId ? { checkpointId: recovery.checkpointId } : {}), details: { recoveryId: recovery.id, reason: blockedReason } });
      // A task already blocked was announced when it was blocked.
      if (!head.blocked) {
        head.blocked = { at: now, reason: blockedReason };
        write.event({ type: 'TASK_BLOCKED', subject: command.taskId, data: { recoveryId: recovery.id, reason: blockedReason, failure: command.failure } });
      }
    } else {
      head.recoveries = [...recent, now];
      // Fence at once: the failed agent's lease ends and its epoch is outdated, so its late writes are refused.
      await retire(write, 'revoked');
      head.epoch = (head.epoch ?? 0) + 1;
      head.state = 'working';
      write.audit({ action: 'recovery.initiated', checkpointId: recovery.checkpointId!, details: { recoveryId: recovery.id, reason: command.reason, failure: command.failure } });
      write.event({ type: 'RECOVERY_INITIATED', subject: recovery.id, data: { recoveryId: recovery.id, checkpointId: recovery.checkpointId, reason: command.reason, failure: command.failure } });
    }
    await repo.recoveries.put(recovery);
    return { recoveryId: recovery.id, corrupt: point.corrupt };
  });
  if (!replayed) ctx.metrics.recoveryAttempts.inc();
  await ctx.integrity.report(ctx, command.actor, result.corrupt);
  const recovery = await readRecovery(ctx, command.actor, result.recoveryId);
  const checkpoint = recovery.checkpointId ? await snapshot(ctx, command.actor.tenant, (repo) => repo.checkpoints.current(recovery.taskId, recovery.checkpointId!)) : undefined;
  const doc = checkpoint?.ok ? checkpoint.doc : undefined;
  return { recovery, checkpoint: doc, continuationPrompt: doc ? continuationPrompt(doc.checkpoint) : null, replayed };
}

export interface RecoveryCompleted {
  recovery: Recovery;
  lease: Lease;
  replayed: boolean;
}

/** POST /v1/recoveries/:id/complete: the recovering agent takes the task, with its lease. */
export async function completeRecovery(ctx: ServiceContext, command: CompleteRecovery): Promise<RecoveryCompleted> {
  const found = await readRecovery(ctx, command.actor, command.recoveryId);
  const { result, replayed } = await runInTask(ctx, command, found.taskId, async (write) => {
    const { repo, head, now } = write;
    const recovery = present(await repo.recoveries.get(command.recoveryId), 'a recovery read before the transaction still exists inside it');
    if (recovery.status === 'blocked') throw new AppError('recovery_blocked', { extra: { recoveryId: recovery.id } });
    if (recovery.status === 'completed') {
      if (recovery.agentId !== command.agentId) throw new AppError('recovery_taken', { extra: { recoveryId: recovery.id } });
      return { leaseId: recovery.leaseId! };
    }
    const point = recovery.checkpointId ? await repo.checkpoints.current(recovery.taskId, recovery.checkpointId) : undefined;
    const recorded = point?.ok ? point.doc.checkpoint.codeVersion : undefined;
    if (codeVersionClash(recorded, command.codeVersion, command.acceptCodeChange)) throw new AppError('code_version_mismatch', { extra: { codeVersion: recorded } });
    const completed: Recovery = { ...recovery, status: 'completed', completedAt: now, agentId: command.agentId, leaseId: command.leaseId };
    await repo.recoveries.put(completed);
    write.audit({ action: 'recovery.completed', agentId: command.agentId, details: { recoveryId: recovery.id } });
    write.event({ type: 'RECOVERY_COMPLETED', subject: recovery.id, data: { recoveryId: recovery.id, agentId: command.agentId, checkpointId: recovery.checkpointId } });
    await grantLease(write, command.leaseId, command.agentId, command.ttlMs ?? LEASE_TTL_MS.default);
    head.state = 'working';
    return { leaseId: command.leaseId };
  });
  const [recovery, lease] = await Promise.all([
    readRecovery(ctx, command.actor, command.recoveryId),
    snapshot(ctx, command.actor.tenant, (repo) => repo.leases.get(result.leaseId)),
  ]);
  return { recovery, lease: lease!, replayed: replayed || result.leaseId !== command.leaseId };
}

/** POST /v1/tasks/:taskId/unblock (admin): the breaker closes and the task may be recovered again. */
export async function unblockTask(ctx: ServiceContext, command: UnblockTask): Promise<void> {
  await runInTask(ctx, command, command.taskId, async (write) => {
    const { head } = write;
    if (head.seq === 0) throw new AppError('not_found', { detail: 'No task with this id exists.' });
    if (head.blocked === undefined) return null;
    write.audit({ action: 'task.unblocked', details: { blockedFor: head.blocked.reason, ...(command.reason ? { reason: command.reason } : {}) } });
    delete head.blocked;
    head.recoveries = [];
    head.state = 'working';
    return null;
  });
}

export async function readRecovery(ctx: ServiceContext, actor: Actor, recoveryId: string): Promise<Recovery> {
  const recovery = await snapshot(ctx, actor.tenant, (repo) => repo.recoveries.get(recoveryId));
  if (recovery === undefined) throw new AppError('not_found', { detail: 'No recovery with this id exists.' });
  return recovery;
}
