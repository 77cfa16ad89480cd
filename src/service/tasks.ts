/**
 * A task as a whole: its state in the A2A / MCP Tasks vocabulary, who holds
 * its lease with which epoch, its latest checkpoint and recovery point, and
 * the handoff waiting for acknowledgment; and the state an agent or the
 * orchestrator sets directly (paused for input, finished, canceled).
 *
 * @module
 */
import type { Actor, SetTaskState } from '../domain/commands.js';
import { currentEpoch, isLive } from '../domain/leases.js';
import { isFinished, isPaused, isSuccess, type TaskState } from '../domain/task-state.js';
import type { TaskInfo } from '../domain/views.js';
import { AppError } from '../errors.js';
import { snapshot, type ServiceContext } from './context.js';
import { walkToRecoveryPoint } from './recovery-point.js';
import type { TaskHead } from './repository/repository.js';
import { runInTask } from './task-transaction.js';


export function stateOf(head: TaskHead): TaskState {
  return head.blocked ? 'blocked' : (head.state ?? 'working');
}

/** GET /v1/tasks/:taskId. */
export async function taskInfo(ctx: ServiceContext, actor: Actor, taskId: string): Promise<TaskInfo> {
  const now = ctx.now().toISOString();
  const info = await snapshot(ctx, actor.tenant, async (repo) => {
    const head = await repo.tasks.head(taskId);
    if (head === undefined) return undefined;
    const handoff = head.openHandoff ? await repo.handoffs.get(head.openHandoff) : undefined;
    const state = stateOf(head);
    const lease = isLive(head.lease, now) ? head.lease : undefined;
    const result: TaskInfo = {
      taskId,
      state,
      finished: isFinished(state),
      paused: isPaused(state),
      success: isSuccess(state),
      lease: lease ? { leaseId: lease.id, agentId: lease.agentId, epoch: lease.epoch, expiresAt: lease.expiresAt } : null,
      epoch: currentEpoch({ epoch: head.epoch ?? 0, ...(head.lease ? { lease: head.lease } : {}) }, now),
      latestCheckpointId: head.latestId ?? null,
      recoveryPointId: null,
      openHandoff: handoff ?? null,
      blocked: head.blocked ?? null,
      checkpoints: head.seq,
      createdAt: head.createdAt,
      updatedAt: head.updatedAt,
    };
    return result;
  });
  if (info === undefined) throw new AppError('not_found', { detail: 'No task with this id exists.' });
  // The walk may take more than one read transaction: it runs after the task's own snapshot.
  const point = await walkToRecoveryPoint(ctx, actor.tenant, taskId);
  info.recoveryPointId = point?.checkpoint?.checkpoint.id ?? null;
  return info;
}

/** PUT /v1/tasks/:taskId/state: a state the protocol does not set itself. */
export async function setTaskState(ctx: ServiceContext, command: SetTaskState): Promise<TaskInfo> {
  await runInTask(ctx, command, command.taskId, async (write) => {
    const { head } = write;
    if (head.seq === 0) throw new AppError('not_found', { detail: 'No task with this id exists.' });
    if (head.blocked) throw new AppError('conflict', { detail: 'The task is blocked; an admin must unblock it first.' });
    if (head.openHandoff) throw new AppError('handoff_pending', { extra: { handoffId: head.openHandoff } });
    write.audit({ action: 'task.state', details: { from: stateOf(head), to: command.state, ...(command.reason ? { reason: command.reason } : {}) } });
    head.state = command.state;
    return null;
  });
  return taskInfo(ctx, command.actor, command.taskId);
}
