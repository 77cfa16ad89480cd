/**
 * Purging a task (`DELETE /v1/tasks/:taskId`, or the retention sweeper once
 * the policy's `expireAfter` has run out): every checkpoint goes, with its
 * revisions, id, history entry, index entries and lineage rows, and what
 * compactions left behind. The task head and the audit chain stay: the chain
 * gains a `task.purged` tombstone entry, so it still verifies and still says
 * what happened.
 *
 * A task of any size is purged in batches, each its own transaction within
 * the write budget (`WriteBudget`: 1 MB, 1 s), so none is too large for
 * FoundationDB. `task.purge` checks and starts: nothing goes under a legal
 * hold (409 `legal_hold`) or while the task's retention, or any checkpoint's,
 * runs (409 `retention_active`; the checkpoints' own retention is read
 * beforehand in bounded read transactions, `purgeRefusal`), the task is
 * marked `purging` (it takes no other write until the purge ends) and a job
 * is noted in the system space `mnt`; then `task.purge_page` removes the next
 * batch until none is left, and the last one appends the tombstone and
 * clears the job. After a crash the maintenance runner finds the job and
 * goes on where the store says the purge stands.
 *
 * @module
 */
import type { Actor, PurgePage, PurgeTask } from '../domain/commands.js';
import type { Checkpoint } from '../domain/checkpoint.js';
import { checkpointRetained, effectivePolicy, taskRetained } from '../domain/retention.js';
import { AppError } from '../errors.js';
import { snapshot, type ServiceContext } from './context.js';
import { rethrowMissingKey, type Repository } from './repository/repository.js';
import { runInTask, type TaskWrite } from './task-transaction.js';

/** History entries one batch looks at, at most. */
const PAGE = 200;
/**
 * Positions where runs start that one batch reads once the checkpoints are
 * gone; it clears them while its write budget lasts (a position's runs are a
 * few keys; a task's first has one per word).
 */
const RUNS_PAGE = 2_000;
/** What removing one checkpoint writes, about, with room to spare: its clears (record, revisions, id, history, index keys). */
const CHECKPOINT_BYTES = 12_000;

export interface PurgeResult {
  taskId: string;
  /** Checkpoints removed by this step. */
  purged: number;
  /** True when the purge is complete (the tombstone is on the chain). */
  done: boolean;
  /** False when an expiry purge found the task no longer due, and left it. */
  due?: false;
}

const NO_TASK = 'No task with this id exists.';

/**
 * Whether a checkpoint of the task is under its own retention or hold, read
 * page by page before a purge starts (each page its own read transaction).
 */
export async function purgeRefusal(ctx: ServiceContext, actor: Actor, taskId: string): Promise<void> {
  const now = ctx.now().toISOString();
  let before: number | undefined;
  for (;;) {
    const page = await snapshot(ctx, actor.tenant, async (repo) => {
      const entries = await repo.checkpoints.history(taskId, PAGE, before);
      const retained = [];
      for (const entry of entries) {
        const checkpoint = await readable(repo, taskId, entry.checkpointId);
        if (checkpoint !== undefined && checkpointRetained(checkpoint, now)) retained.push(entry.checkpointId);
      }
      return { entries, retained };
    });
    if (page.retained.length > 0) throw new AppError('retention_active', { extra: { checkpointId: page.retained[0] } });
    if (page.entries.length < PAGE) return;
    before = page.entries[page.entries.length - 1]!.seq;
  }
}

/** Handler of `task.purge`: checks, marks the task, notes the job, and removes the first batch. */
export async function purgeTask(ctx: ServiceContext, command: PurgeTask): Promise<PurgeResult> {
  const { result } = await runInTask(ctx, command, command.taskId, async (write) => {
    const { head, now, repo } = write;
    if (head.seq === 0) throw new AppError('not_found', { detail: NO_TASK });
    // The sweeper read the task as due in an earlier transaction: a write since (or another instance's purge) moved it on.
    if (command.expiresAt !== undefined && head.purging === undefined && !(head.expiresAt !== undefined && head.expiresAt <= now)) {
      write.unchanged();
      return { taskId: command.taskId, purged: 0, done: true, due: false as const };
    }
    if (head.purging === undefined) {
      if (head.legalHold !== undefined) throw new AppError('legal_hold', { extra: { reason: head.legalHold.reason } });
      if (taskRetained(effectivePolicy(head.policy, write.defaults), head.updatedAt, now)) throw new AppError('retention_active');
      head.purging = { startedAt: now, by: command.actor.subject, purged: 0 };
      repo.jobs.put({ kind: 'purge', taskId: command.taskId, startedAt: now, by: command.actor.subject });
    }
    return purgeBatch(write, command.taskId);
  });
  return result;
}

/** Handler of `task.purge_page`: the next batch of a purge in progress (nothing when none is). */
export async function purgePage(ctx: ServiceContext, command: PurgePage): Promise<PurgeResult> {
  const { result } = await runInTask(ctx, command, command.taskId, async (write) => {
    if (write.head.purging === undefined) {
      // Finished meanwhile (a second runner, a repeat): nothing to do, and no job left behind.
      write.repo.jobs.done('purge', command.taskId);
      write.unchanged();
      return { taskId: command.taskId, purged: 0, done: true };
    }
    return purgeBatch(write, command.taskId);
  });
  return result;
}

/** Removes checkpoints, newest first, while the batch's write budget allows; the last batch ends the purge. */
async function purgeBatch(write: TaskWrite, taskId: string): Promise<PurgeResult> {
  const { repo, head, now } = write;
  const budget = repo.writeBudget();
  const entries = await repo.checkpoints.history(taskId, PAGE);
  let purged = 0;
  for (const entry of entries) {
    if (purged > 0 && !budget.allows(CHECKPOINT_BYTES)) return progress(head, { taskId, purged, done: false });
    const checkpoint = await readable(repo, taskId, entry.checkpointId);
    // One that became retained after the purge started (a write that raced it) is a refusal now, not half a purge.
    if (checkpoint !== undefined && checkpointRetained(checkpoint, now)) throw new AppError('retention_active', { extra: { checkpointId: entry.checkpointId } });
    await repo.links.unlinkAll(entry.checkpointId);
    // A compacted checkpoint left its id, history slot and lineage rows behind: they go now.
    if (checkpoint === undefined) repo.checkpoints.forget(taskId, entry.checkpointId, entry.seq);
    else repo.checkpoints.remove(checkpoint, entry.seq);
    purged += 1;
  }
  if (entries.length === PAGE) return progress(head, { taskId, purged, done: false });
  // Then the task's word runs, which outlive compacted checkpoints, a page at a time.
  if (!(await repo.terms.clearTask(taskId, RUNS_PAGE, (bytes) => budget.allows(bytes))).done) return progress(head, { taskId, purged, done: false });
  // The head keeps its sequence, so checkpoints written after the purge never reuse a history slot.
  delete head.latestId;
  delete head.latestAt;
  const total = (head.purging?.purged ?? 0) + purged;
  delete head.purging;
  repo.jobs.done('purge', taskId);
  write.audit({ action: 'task.purged', details: { checkpoints: total } });
  return { taskId, purged, done: true };
}

/** Counts a batch on the head, for the tombstone's total. */
function progress(head: TaskWrite['head'], result: PurgeResult): PurgeResult {
  if (head.purging !== undefined) head.purging.purged += result.purged;
  return result;
}

/**
 * A checkpoint as stored, for its retention and its index entries: undefined
 * when compacted away (its record gone). One whose record does not parse
 * stops the purge: without its content neither its retention nor its index
 * entries are known.
 */
async function readable(repo: Repository, taskId: string, checkpointId: string): Promise<Checkpoint | undefined> {
  const raw = await repo.checkpoints.raw(taskId, checkpointId).catch((error: unknown) => {
    rethrowMissingKey(error);
    return null;
  });
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(String(raw?.c)) as Checkpoint;
  } catch {
    throw new AppError('checkpoint_corrupted', { detail: 'A checkpoint of the task cannot be read, so its retention is unknown; the purge is refused.', extra: { checkpointId } });
  }
}
