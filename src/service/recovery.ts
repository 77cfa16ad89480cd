/**
 * Recovery after a failure. A recovery starts from the recovery point (the
 * newest checkpoint that verifies, `recovery-point.ts`); a walk that found
 * none, or gave up before it looked at every checkpoint, blocks the task
 * with a reason that says which. Starting a recovery fences the task at once (the failed agent's late
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
import { linkTo } from '../telemetry/tracing.js';
import { present } from './invariants.js';
import { walkToRecoveryPoint, type RecoveryPoint, type WalkedPoint } from './recovery-point.js';
import type { CheckpointDoc, Repository } from './repository/repository.js';
import { runInTask } from './task-transaction.js';

/** Times a recovery walks again when the task changed between its walk and its transaction. */
const WALK_ATTEMPTS = 3;
/**
 * Initiated recoveries the task head remembers, so that compaction keeps
 * the checkpoints they started from; past this many the oldest is forgotten,
 * and its completion, should it come, may find its checkpoint compacted.
 */
export const MAX_OPEN_RECOVERIES = 16;

/** The task changed after its recovery point was walked to: walk again. */
class StaleWalk extends Error {}

export interface RecoveryStarted {
  recovery: Recovery;
  checkpoint: CheckpointDoc | undefined;
  continuationPrompt: string | null;
  replayed: boolean;
}

/**
 * POST /v1/tasks/:taskId/recoveries. The recovery point is walked to first,
 * over as many read transactions as it takes; the recovery's own
 * transaction then checks that the task has no checkpoint the walk did not
 * see and that the point still verifies, and walks again if not.
 */
export async function startRecovery(ctx: ServiceContext, command: StartRecovery): Promise<RecoveryStarted> {
  // The recovery's span links to the trace of the task's last write: the work it recovers.
  linkTo(ctx, (await snapshot(ctx, command.actor.tenant, (repo) => repo.tasks.head(command.taskId)))?.traceparent, { 'baton.link': 'last_write' });
  for (let attempt = 1; ; attempt++) {
    const walked = await walkToRecoveryPoint(ctx, command.actor.tenant, command.taskId);
    try {
      return await startFrom(ctx, command, walked);
    } catch (error) {
      if (!(error instanceof StaleWalk)) throw error;
      if (attempt >= WALK_ATTEMPTS) throw new AppError('conflict', { detail: 'The task kept changing while its recovery point was looked for; send the recovery again.' });
    }
  }
}

async function startFrom(ctx: ServiceContext, command: StartRecovery, walked: WalkedPoint | undefined): Promise<RecoveryStarted> {
  const { result, replayed } = await runInTask(ctx, command, command.taskId, async (write) => {
    const { repo, head, now } = write;
    if (head.seq === 0) throw new AppError('not_found', { detail: 'No task with this id exists.' });
    const point = await confirm(repo, command.taskId, head.seq, walked);
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
            ? point.complete
              ? 'no_verified_checkpoint'
              : 'walk_limit_reached'
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
      head.openRecoveries = [...(head.openRecoveries ?? []), { id: recovery.id, checkpointId: recovery.checkpointId! }].slice(-MAX_OPEN_RECOVERIES);
      // Fence at once: the failed agent's lease ends and its epoch is outdated, so its late writes are refused.
      await retire(write, 'revoked');
      head.epoch = (head.epoch ?? 0) + 1;
      head.state = 'working';
      write.audit({ action: 'recovery.initiated', checkpointId: recovery.checkpointId!, details: { recoveryId: recovery.id, reason: command.reason, failure: command.failure } });
      write.event({ type: 'RECOVERY_INITIATED', subject: recovery.id, data: { recoveryId: recovery.id, checkpointId: recovery.checkpointId, reason: command.reason, failure: command.failure } });
    }
    await repo.recoveries.put(recovery);
    return { recoveryId: recovery.id, corrupt: point.corrupt, blocked: blockedReason !== undefined && head.blocked?.at === now };
  });
  if (!replayed) ctx.metrics.recoveryAttempts.inc();
  if (!replayed && result.blocked) ctx.metrics.tasksBlocked.inc();
  await ctx.integrity.report(ctx, command.actor, result.corrupt);
  const recovery = await readRecovery(ctx, command.actor, result.recoveryId);
  const checkpoint = recovery.checkpointId ? await snapshot(ctx, command.actor.tenant, (repo) => repo.checkpoints.current(recovery.taskId, recovery.checkpointId!)) : undefined;
  const doc = checkpoint?.ok ? checkpoint.doc : undefined;
  return { recovery, checkpoint: doc, continuationPrompt: doc ? continuationPrompt(doc.checkpoint) : null, replayed };
}

/**
 * The walked recovery point, if it still holds in this transaction: no
 * checkpoint was added since the walk began, and the point still verifies.
 * The corrupt checkpoints passed stay corrupt (they cannot be changed).
 */
async function confirm(repo: Repository, taskId: string, seq: number, walked: WalkedPoint | undefined): Promise<RecoveryPoint> {
  if (walked === undefined || walked.seq !== seq) throw new StaleWalk();
  if (walked.checkpoint === undefined) return walked;
  const current = await repo.checkpoints.current(taskId, walked.checkpoint.checkpoint.id);
  if (!current?.ok) throw new StaleWalk();
  return { ...walked, checkpoint: current.doc };
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
    // Compaction keeps an open recovery's checkpoint; one gone anyway (forgotten past the bound) cannot be checked against, so it is not resumed from.
    if (recovery.checkpointId !== undefined && point === undefined) throw new AppError('checkpoint_compacted', { extra: { checkpointId: recovery.checkpointId } });
    const recorded = point?.ok ? point.doc.checkpoint.codeVersion : undefined;
    if (codeVersionClash(recorded, command.codeVersion, command.acceptCodeChange)) throw new AppError('code_version_mismatch', { extra: { codeVersion: recorded } });
    const completed: Recovery = { ...recovery, status: 'completed', completedAt: now, agentId: command.agentId, leaseId: command.leaseId };
    await repo.recoveries.put(completed);
    const open = (head.openRecoveries ?? []).filter((entry) => entry.id !== recovery.id);
    if (open.length > 0) head.openRecoveries = open;
    else delete head.openRecoveries;
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
