/**
 * The recovery point: the newest checkpoint of a task that verifies, found
 * by walking back from the task's latest along each corrupt checkpoint's
 * `lastSuccessfulState`, its parent, then the task's history. The walk
 * reads a few keys per checkpoint; when one read transaction's budget is
 * spent it carries on in the next, from where it stopped, so a long run of
 * corrupt checkpoints is walked past rather than taken for "none verifies".
 * It gives up after {@link MAX_STEPS} checkpoints (a person should look at a
 * task that damaged), and then says so: it claims nothing about the ones it
 * did not look at.
 *
 * @module
 */
import type { Actor } from '../domain/commands.js';
import { AppError } from '../errors.js';
import { snapshot, type ServiceContext } from './context.js';
import { rethrowMissingKey, type CheckpointDoc, type Corruption, type Repository } from './repository/repository.js';

/** How many checkpoints the walk to a recovery point looks at before it gives up (escalate to a human). */
export const MAX_STEPS = 1_000;
/** Keys one step of the walk may read: a history entry, the record, the hint's task, the parent link and its task. */
const KEYS_PER_STEP = 6;

export interface RecoveryPoint {
  checkpoint: CheckpointDoc | undefined;
  /** The corrupt checkpoints passed on the way, newest first. */
  corrupt: Corruption[];
  /** False when the walk stopped at {@link MAX_STEPS} with checkpoints still to look at. */
  complete: boolean;
}

/** A walk back from a task's latest checkpoint, carried from one read transaction to the next. */
export class RecoveryWalk {
  private candidate: string | undefined;
  private started = false;
  private historyBefore: number | undefined;
  private readonly visited = new Set<string>();
  private readonly corrupt: Corruption[] = [];
  private steps = 0;

  constructor(
    readonly taskId: string,
    private readonly maxSteps = MAX_STEPS,
  ) {}

  /**
   * Walks on inside `repo`'s transaction while its read budget lasts (one
   * step at least, so every transaction makes progress). Answers the point
   * once the walk has ended, or undefined when the budget ran out first.
   */
  async advance(repo: Repository): Promise<RecoveryPoint | undefined> {
    const budget = repo.budget();
    if (!this.started) {
      this.candidate = await this.olderInHistory(repo);
      this.started = true;
    }
    for (let first = true; this.candidate !== undefined; first = false) {
      if (this.steps >= this.maxSteps) return { checkpoint: undefined, corrupt: [...this.corrupt], complete: false };
      if (!first && !budget.allows(KEYS_PER_STEP)) return undefined;
      const candidate = this.candidate;
      this.steps += 1;
      this.visited.add(candidate);
      const loaded = await repo.checkpoints.current(this.taskId, candidate);
      if (loaded?.ok) return { checkpoint: loaded.doc, corrupt: [...this.corrupt], complete: true };
      if (loaded !== undefined) this.corrupt.push(loaded.corruption);
      this.candidate = (await this.stepBack(repo, candidate)) ?? (await this.olderInHistory(repo));
    }
    return { checkpoint: undefined, corrupt: [...this.corrupt], complete: true };
  }

  /** The next checkpoint back in the task's history not yet looked at. */
  private async olderInHistory(repo: Repository): Promise<string | undefined> {
    for (;;) {
      const [entry] = await repo.checkpoints.history(this.taskId, 1, this.historyBefore);
      if (entry === undefined) return undefined;
      this.historyBefore = entry.seq;
      if (!this.visited.has(entry.checkpointId)) return entry.checkpointId;
    }
  }

  /**
   * Where a corrupt checkpoint points back to: the `lastSuccessfulState` its
   * damaged text still names (a hint only: what it names must verify in turn),
   * else its parent, which is stored apart from the content.
   */
  private async stepBack(repo: Repository, checkpointId: string): Promise<string | undefined> {
    const usable = async (id: unknown): Promise<string | undefined> =>
      typeof id === 'string' && !this.visited.has(id) && (await repo.checkpoints.taskOf(id)) === this.taskId ? id : undefined;
    const raw = await repo.checkpoints.raw(this.taskId, checkpointId).catch((error: unknown) => {
      rethrowMissingKey(error);
      return undefined;
    });
    let hint: unknown;
    try {
      hint = (JSON.parse(String(raw?.c)) as { recovery?: { lastSuccessfulState?: unknown } }).recovery?.lastSuccessfulState;
    } catch {
      hint = undefined;
    }
    return (await usable(hint)) ?? (await usable(await repo.links.parentOf(checkpointId)));
  }
}

/** A finished walk, with the task's history length (`head.seq`) when it began. */
export interface WalkedPoint extends RecoveryPoint {
  seq: number;
}

/**
 * The recovery point of `taskId`, walked over as many read transactions as
 * it takes; undefined when the task does not exist.
 */
export async function walkToRecoveryPoint(ctx: ServiceContext, tenant: string, taskId: string, maxSteps = MAX_STEPS): Promise<WalkedPoint | undefined> {
  const walk = new RecoveryWalk(taskId, maxSteps);
  let seq: number | undefined;
  for (;;) {
    const step = await snapshot(ctx, tenant, async (repo) => {
      const head = await repo.tasks.head(taskId);
      if (head === undefined) return null;
      seq ??= head.seq;
      return walk.advance(repo);
    });
    if (step === null) return undefined;
    if (step !== undefined) return { ...step, seq: seq! };
  }
}

/** GET /v1/tasks/:taskId/recovery-point; the corrupt checkpoints passed are reported. */
export async function recoveryPoint(ctx: ServiceContext, actor: Actor, taskId: string): Promise<{ checkpoint: CheckpointDoc; skipped: string[] }> {
  const found = await walkToRecoveryPoint(ctx, actor.tenant, taskId);
  if (found === undefined) throw new AppError('not_found', { detail: 'No task with this id exists.' });
  await ctx.integrity.report(ctx, actor, found.corrupt);
  const skipped = found.corrupt.map((c) => c.checkpointId);
  if (found.checkpoint === undefined) throw noRecoveryPoint(found, skipped);
  return { checkpoint: found.checkpoint, skipped };
}

function noRecoveryPoint(found: RecoveryPoint, skipped: string[]): AppError {
  if (found.complete) return new AppError('checkpoint_corrupted', { detail: 'No checkpoint of this task verifies; a person must look at it.', extra: { corrupted: skipped, walkComplete: true } });
  return new AppError('checkpoint_corrupted', {
    detail: `None of the newest ${MAX_STEPS} checkpoints of this task verifies; the walk stopped there, older ones were not looked at. A person must look at it.`,
    extra: { corrupted: skipped, walkComplete: false },
  });
}
