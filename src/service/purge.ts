/**
 * Purging a task (`DELETE /v1/tasks/:taskId`): every checkpoint of the task
 * goes, with its revisions, id, history entry, index entries and lineage
 * rows, in one task transaction. The task head and the audit chain stay:
 * the chain gains a `task.purged` tombstone entry, so it still verifies and
 * still says what happened. Nothing under a retention period or a legal hold
 * is purged; the whole purge is refused instead, so a task is never left
 * half purged.
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import type { PurgeTask } from '../domain/commands.js';
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
    for (const { checkpoint } of entries) {
      if (retained(checkpoint, now)) throw new AppError('retention_active');
    }
    for (const { checkpoint, seq } of entries) {
      await repo.links.unlinkAll(checkpoint.id);
      repo.checkpoints.remove(checkpoint, seq);
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
async function allCheckpoints(repo: Repository, taskId: string): Promise<{ checkpoint: Checkpoint; seq: number }[]> {
  const found: { checkpoint: Checkpoint; seq: number }[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await repo.checkpoints.history(taskId, BATCH, before);
    for (const entry of page) {
      const raw = await repo.checkpoints.raw(taskId, entry.checkpointId).catch(() => null);
      if (raw === undefined) continue;
      let checkpoint: Checkpoint;
      try {
        checkpoint = JSON.parse(String(raw?.c)) as Checkpoint;
      } catch {
        // Without its content neither its retention nor its index entries are known: refuse rather than guess.
        throw new AppError('checkpoint_corrupted', { detail: 'A checkpoint of the task cannot be read, so its retention is unknown; the purge is refused.', extra: { checkpointId: entry.checkpointId } });
      }
      found.push({ checkpoint, seq: entry.seq });
    }
    if (page.length < BATCH) return found;
    before = page[page.length - 1]!.seq;
  }
}

/** Whether a legal hold or an unexpired retention period applies to the checkpoint at `now`. */
export function retained(checkpoint: Checkpoint, now: string): boolean {
  const { legalHold, retentionPolicy } = checkpoint.compliance;
  if (legalHold === true) return true;
  if (retentionPolicy === undefined) return false;
  return addDuration(checkpoint.createdAt, retentionPolicy) > Date.parse(now);
}

/** `start` plus an ISO 8601 duration (calendar years and months as the calendar counts them), in ms. */
export function addDuration(start: string, duration: string): number {
  const match = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(duration);
  // The schema admitted only well-formed durations; anything else keeps the data, the safe side.
  if (match === null) return Number.POSITIVE_INFINITY;
  const [, y, mo, w, d, h, mi, s] = match.map((part) => Number(part ?? 0));
  const at = new Date(start);
  at.setUTCFullYear(at.getUTCFullYear() + y!, at.getUTCMonth() + mo!);
  return at.getTime() + ((w! * 7 + d!) * 86_400 + h! * 3600 + mi! * 60 + s!) * 1000;
}
