/**
 * Purging a task (`DELETE /v1/tasks/:taskId`): every checkpoint of the task
 * goes, with its revisions, id, history entry, index entries and lineage
 * rows, in one task transaction. The task head and the audit chain stay:
 * the chain gains a `task.purged` tombstone entry, so it still verifies and
 * still says what happened. Nothing under a retention period (the task's, or
 * a checkpoint's own) or a legal hold is purged; the whole purge is refused
 * instead (409 `retention_active`, `legal_hold`), so a task is never left
 * half purged.
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import type { PurgeTask } from '../domain/commands.js';
import { checkpointRetained, effectivePolicy, taskRetained } from '../domain/retention.js';
import { AppError } from '../errors.js';
import type { ServiceContext } from './context.js';
import type { Repository } from './repository/repository.js';
import { runInTask } from './task-transaction.js';

/** History entries read per range read while collecting the task's checkpoints. */
const BATCH = 500;

export interface PurgeResult {
  taskId: string;
  purged: number;
}

export async function purgeTask(ctx: ServiceContext, command: PurgeTask): Promise<PurgeResult> {
  const { result } = await runInTask(ctx, command, command.taskId, async (write) => {
    const { repo, head, now } = write;
    if (head.seq === 0) throw new AppError('not_found', { detail: 'No task with this id exists.' });
    const entries = await allCheckpoints(repo, command.taskId);
    if (head.legalHold !== undefined) throw new AppError('legal_hold', { extra: { reason: head.legalHold.reason } });
    if (taskRetained(effectivePolicy(head.policy, ctx.retentionDefaults), head.updatedAt, now)) throw new AppError('retention_active');
    for (const { checkpoint } of entries) {
      if (checkpoint !== undefined && checkpointRetained(checkpoint, now)) throw new AppError('retention_active');
    }
    for (const { checkpoint, seq, checkpointId } of entries) {
      await repo.links.unlinkAll(checkpointId);
      // A compacted checkpoint left its id, history slot and lineage rows behind: they go now.
      if (checkpoint === undefined) repo.checkpoints.forget(command.taskId, checkpointId, seq);
      else repo.checkpoints.remove(checkpoint, seq);
    }
    // The head keeps its sequence, so checkpoints written after the purge never reuse a history slot.
    delete head.latestId;
    write.audit({ action: 'task.purged', details: { checkpoints: entries.length } });
    return { taskId: command.taskId, purged: entries.length };
  });
  return result;
}

/**
 * Every checkpoint of the task with its history slot, read as stored: a
 * record that fails its hash but still parses is purged too; one that does
 * not parse stops the purge.
 */
async function allCheckpoints(repo: Repository, taskId: string): Promise<{ checkpoint: Checkpoint | undefined; checkpointId: string; seq: number }[]> {
  const found: { checkpoint: Checkpoint | undefined; checkpointId: string; seq: number }[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await repo.checkpoints.history(taskId, BATCH, before);
    for (const entry of page) {
      const raw = await repo.checkpoints.raw(taskId, entry.checkpointId).catch(() => null);
      if (raw === undefined) {
        found.push({ checkpoint: undefined, checkpointId: entry.checkpointId, seq: entry.seq });
        continue;
      }
      let checkpoint: Checkpoint;
      try {
        checkpoint = JSON.parse(String(raw?.c)) as Checkpoint;
      } catch {
        // Without its content neither its retention nor its index entries are known: refuse rather than guess.
        throw new AppError('checkpoint_corrupted', { detail: 'A checkpoint of the task cannot be read, so its retention is unknown; the purge is refused.', extra: { checkpointId: entry.checkpointId } });
      }
      found.push({ checkpoint, checkpointId: entry.checkpointId, seq: entry.seq });
    }
    if (page.length < BATCH) return found;
    before = page[page.length - 1]!.seq;
  }
}
