/**
 * A task's retention policy and legal hold, and compaction (DESIGN §3, §4;
 * `docs/retention.md`). The policy and the hold live in the task head, so
 * every write to the task sees them in its own transaction; each change is
 * audited and announced. Compaction removes old checkpoints under `keepLast`
 * but never the latest, the recovery point, the checkpoint an initiated
 * recovery started from, the checkpoint an open handoff finalized, the
 * lease holder's newest, or anything a retention period or a
 * legal hold covers; what it removes leaves its id and lineage rows behind,
 * so a read answers 410 `checkpoint_compacted` and the lineage of what is
 * kept still reaches its root. At most {@link MAX_REMOVALS} go per call.
 *
 * @module
 */
import type { Actor, CompactTask, LegalHoldChange, SetPolicy } from '../domain/commands.js';
import { isLive } from '../domain/leases.js';
import { checkpointRetained, effectivePolicy, taskRetained, type LegalHold, type TaskPolicy } from '../domain/retention.js';
import { AppError } from '../errors.js';
import { snapshot, type ServiceContext } from './context.js';
import { walkToRecoveryPoint } from './recovery-point.js';
import type { Repository, TaskHead } from './repository/repository.js';
import { policyDefaults } from './fleet/settings.js';
import { runInTask } from './task-transaction.js';

/** The most checkpoints one compaction removes; a call that stops there says `more: true`. */
export const MAX_REMOVALS = 500;
/** History entries one compaction looks at. */
const MAX_SCANNED = 5_000;
const PAGE = 500;

export interface PolicyView {
  taskId: string;
  /** The task's own policy. */
  policy: TaskPolicy;
  /** What applies: the task's own over the tenant's defaults. */
  effective: TaskPolicy;
  legalHold: LegalHold | null;
}

export type KeepReason = 'keep_last' | 'latest' | 'recovery_point' | 'open_recovery' | 'open_handoff' | 'live_lease' | 'retention';

export interface CompactionPlan {
  removed: string[];
  kept: { id: string; reason: KeepReason }[];
  /** Older checkpoints are left for the next call (the removal bound or the scan bound was reached). */
  more: boolean;
}

function view(defaults: TaskPolicy, head: TaskHead): PolicyView {
  return { taskId: head.taskId, policy: head.policy ?? {}, effective: effectivePolicy(head.policy, defaults), legalHold: head.legalHold ?? null };
}

const NO_TASK = 'No task with this id exists.';

export async function readPolicy(ctx: ServiceContext, actor: Actor, taskId: string): Promise<PolicyView> {
  const { head, defaults } = await snapshot(ctx, actor.tenant, async (repo) => ({ head: await repo.tasks.head(taskId), defaults: await policyDefaults(ctx, repo) }));
  if (head === undefined) throw new AppError('not_found', { detail: NO_TASK });
  return view(defaults, head);
}

/** Handler of `task.policy`. */
export async function setPolicy(ctx: ServiceContext, command: SetPolicy): Promise<PolicyView> {
  const { result } = await runInTask(ctx, command, command.taskId, async ({ head, audit, event, defaults }) => {
    if (head.seq === 0) throw new AppError('not_found', { detail: NO_TASK });
    const policy: TaskPolicy = { ...head.policy };
    for (const member of ['retention', 'expireAfter', 'keepLast'] as const) {
      const value = command[member];
      if (value === null) delete policy[member];
      else if (value !== undefined) Object.assign(policy, { [member]: value });
    }
    head.policy = policy;
    audit({ action: 'task.policy_set', details: { ...policy } });
    event({ type: 'TASK_POLICY_SET', subject: command.taskId, data: { policy } });
    return view(defaults, head);
  });
  return result;
}

/** Handler of `task.hold`: a legal hold placed or lifted. */
export async function changeLegalHold(ctx: ServiceContext, command: LegalHoldChange): Promise<PolicyView> {
  const { result } = await runInTask(ctx, command, command.taskId, async ({ head, audit, event, now, defaults }) => {
    if (head.seq === 0) throw new AppError('not_found', { detail: NO_TASK });
    if (command.hold) {
      head.legalHold = { reason: command.reason ?? '', at: now, by: command.actor.subject };
      audit({ action: 'task.legal_hold_placed', details: { reason: head.legalHold.reason } });
      event({ type: 'LEGAL_HOLD_PLACED', subject: command.taskId, data: { reason: head.legalHold.reason } });
    } else if (head.legalHold !== undefined) {
      const { reason } = head.legalHold;
      delete head.legalHold;
      audit({ action: 'task.legal_hold_released', details: { reason, ...(command.reason ? { releaseReason: command.reason } : {}) } });
      event({ type: 'LEGAL_HOLD_RELEASED', subject: command.taskId, data: { reason } });
    }
    return view(defaults, head);
  });
  return result;
}

/** The checkpoints the compaction must keep besides `keepLast`, found before its transaction: the recovery point. */
export async function compactionGuards(ctx: ServiceContext, actor: Actor, taskId: string): Promise<string[]> {
  const point = await walkToRecoveryPoint(ctx, actor.tenant, taskId);
  if (point === undefined) throw new AppError('not_found', { detail: NO_TASK });
  const id = point.checkpoint?.checkpoint.id;
  return id === undefined ? [] : [id];
}

/** What compacting the task would remove and keep now; refuses under a hold or the task's retention. */
async function plan(ctx: ServiceContext, repo: Repository, head: TaskHead, keepLast: number, protect: readonly string[], now: string): Promise<CompactionPlan & { drop: { id: string }[] }> {
  if (head.legalHold !== undefined) throw new AppError('legal_hold', { extra: { reason: head.legalHold.reason } });
  if (taskRetained(effectivePolicy(head.policy, await policyDefaults(ctx, repo)), head.updatedAt, now)) throw new AppError('retention_active');
  const guards = new Map<string, KeepReason>(protect.map((id) => [id, 'recovery_point']));
  // Its completion checks the agent's code version against the checkpoint it started from.
  for (const open of head.openRecoveries ?? []) guards.set(open.checkpointId, 'open_recovery');
  if (head.latestId !== undefined) guards.set(head.latestId, 'latest');
  if (head.openHandoff !== undefined) {
    const handoff = await repo.handoffs.get(head.openHandoff);
    if (handoff !== undefined) guards.set(handoff.checkpointId, 'open_handoff');
  }
  const holder = isLive(head.lease, now, ctx.clockSkewMs) ? head.lease?.agentId : undefined;
  const result: CompactionPlan & { drop: { id: string }[] } = { removed: [], kept: [], more: false, drop: [] };
  let seen = 0;
  let holderKept = false;
  let before: number | undefined;
  for (;;) {
    const entries = await repo.checkpoints.history(head.taskId, PAGE, before);
    for (const entry of entries) {
      const loaded = await repo.checkpoints.current(head.taskId, entry.checkpointId);
      // Already compacted, or corrupt (kept for the operator to see: a compaction does not hide damage).
      if (loaded === undefined) continue;
      const id = entry.checkpointId;
      seen += 1;
      const checkpoint = loaded.ok ? loaded.doc.checkpoint : undefined;
      let reason: KeepReason | undefined = guards.get(id);
      if (reason === undefined && seen <= keepLast) reason = 'keep_last';
      if (reason === undefined && holder !== undefined && !holderKept && checkpoint?.agentId === holder) reason = 'live_lease';
      if (reason === undefined && (checkpoint === undefined || checkpointRetained(checkpoint, now))) reason = 'retention';
      if (checkpoint?.agentId === holder) holderKept ||= reason !== undefined;
      if (reason !== undefined) result.kept.push({ id, reason });
      else if (result.removed.length < MAX_REMOVALS) {
        result.removed.push(id);
        result.drop.push({ id });
      } else {
        result.more = true;
        return result;
      }
    }
    if (entries.length < PAGE) return result;
    if (seen >= MAX_SCANNED) {
      result.more = true;
      return result;
    }
    before = entries[entries.length - 1]!.seq;
  }
}

/** A dry run: what a compaction would do now, read on a snapshot, nothing written. */
export async function compactionDryRun(ctx: ServiceContext, actor: Actor, taskId: string, keepLast: number, protect: readonly string[]): Promise<CompactionPlan> {
  const planned = await snapshot(ctx, actor.tenant, async (repo) => {
    const head = await repo.tasks.head(taskId);
    if (head === undefined) return undefined;
    return plan(ctx, repo, head, keepLast, protect, ctx.now().toISOString());
  });
  if (planned === undefined) throw new AppError('not_found', { detail: NO_TASK });
  const { drop: _drop, ...result } = planned;
  return result;
}

/** Handler of `task.compact`. */
export async function compactTask(ctx: ServiceContext, command: CompactTask): Promise<CompactionPlan> {
  const { result } = await runInTask(ctx, command, command.taskId, async ({ repo, head, now, audit, event, unchanged }) => {
    if (head.seq === 0) throw new AppError('not_found', { detail: NO_TASK });
    const { drop, ...planned } = await plan(ctx, repo, head, command.keepLast, command.protect, now);
    // Nothing to remove is no change of the task (its expiry, counted from its last write, stays).
    if (planned.removed.length === 0) unchanged();
    for (const { id } of drop) {
      const loaded = await repo.checkpoints.current(command.taskId, id);
      if (loaded?.ok) repo.checkpoints.compact(loaded.doc.checkpoint);
    }
    // Done for now: the next write past keepLast asks again.
    if (!planned.more) repo.jobs.done('compact', command.taskId);
    if (planned.removed.length > 0) {
      audit({ action: 'task.compacted', details: { keepLast: command.keepLast, removed: planned.removed } });
      event({ type: 'CHECKPOINTS_COMPACTED', subject: command.taskId, data: { removed: planned.removed, keepLast: command.keepLast } });
    }
    return planned;
  });
  return result;
}
