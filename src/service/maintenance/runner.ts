/**
 * The maintenance runner: long passes over the store, in bounded batches,
 * each batch a command through `execute` (its own task transaction, within
 * the write budget), resumable after a crash from the state the store holds.
 * Every `BATON_RETENTION_SWEEP_MS` it (1) starts a purge of each task whose
 * policy's `expireAfter` has run out (the system space `texp`), and (2) goes
 * on with every purge in progress (the system space `mnt`), batch after
 * batch, until each is done or the tick's time is spent, and (3) trims each
 * tenant's event outbox of events older than `BATON_EVENT_RETENTION_MS`. One instance of a
 * fleet runs it at a time (`fleet/duties.ts`); should two run at once, a
 * batch is a task transaction that finds what is left, so they only share
 * the work.
 *
 * @module
 */
import type { CommandBase, PurgeTask } from '../../domain/commands.js';
import { AppError } from '../../errors.js';
import type { ServiceContext } from '../context.js';
import { execute } from '../execute.js';
import { purgeRefusal, type PurgeResult } from '../purge.js';
import { expiredTasks, pendingJobs, Repository, tenants, type Job } from '../repository/repository.js';
import { compactionGuards, readPolicy } from '../retention.js';
import { inSpan } from '../../telemetry/tracing.js';
import type { Periodic } from './periodic.js';
import { dutyPeriodic } from '../fleet/duties.js';
import { currentSettings } from '../fleet/settings.js';
import { runTransaction } from '../transactions.js';

/** Tasks, jobs and tenants looked at per read. */
const BATCH = 100;
/** Events one trimming transaction removes, at most (each a small clear). */
const EVENTS_PER_BATCH = 1_000;
/** How long one tick may keep going through batches before it yields to the next. */
const TICK_MS = 2_000;

/** A command of the runner's own, on behalf of the tenant. */
function systemCommand(ctx: ServiceContext, tenant: string, subject: string, suffix: string): CommandBase {
  return { operationId: `op:maintenance:${suffix}:${ctx.now().getTime()}`, fingerprint: '', actor: { tenant, role: 'admin', subject }, at: ctx.now().toISOString() };
}

/**
 * The purge that starts when a task's `expireAfter` has run out, as the
 * sweeper found it due. One id per task and expiry, whoever runs it, so a
 * second instance's sweeper repeats the first one's purge rather than
 * starting another; and the purge re-checks in its own transaction that the
 * task is still due (a write since moved its expiry on).
 */
export function expiryPurge(ctx: ServiceContext, due: { tenant: string; taskId: string; expiresAt: string }): PurgeTask {
  return {
    ...systemCommand(ctx, due.tenant, 'baton:retention-sweeper', 'expire'),
    operationId: `op:maintenance:expire:${due.taskId}:${due.expiresAt}`,
    idempotency: 'once',
    kind: 'task.purge',
    taskId: due.taskId,
    expiresAt: due.expiresAt,
  };
}

/**
 * Runs a purge's batches until it is done or `until` (performance.now()) has
 * passed. Each batch is an operation the service names (`op:`), even when
 * the purge came under a client's Idempotency-Key (`key:K`): a `key:` id is
 * recorded and swept as a client's key, which a batch is not.
 */
async function continuePurge(ctx: ServiceContext, base: CommandBase, taskId: string, first: PurgeResult, until: number): Promise<PurgeResult> {
  let step = first;
  let purged = first.purged;
  const pages = base.operationId.startsWith('op:') ? base.operationId : `op:${base.operationId}`;
  for (let batch = 1; !step.done && performance.now() < until; batch++) {
    step = await execute(ctx, { ...base, operationId: `${pages}:${batch}`, kind: 'task.purge_page', taskId });
    purged += step.purged;
  }
  return { taskId, purged, done: step.done };
}

/**
 * A whole purge for a request: checks, starts, and goes on batch by batch
 * for up to `withinMs`; what is left then is the runner's.
 */
export async function purgeWithin(ctx: ServiceContext, command: PurgeTask, withinMs: number): Promise<PurgeResult> {
  await purgeRefusal(ctx, command.actor, command.taskId);
  const until = performance.now() + withinMs;
  const { idempotency: _idempotency, ...base } = command;
  return continuePurge(ctx, base, command.taskId, await execute(ctx, command), until);
}

/** One tick: expired tasks purged, purges in progress continued. */
export interface MaintenanceSettings {
  intervalMs: number;
}

export function maintenanceTick(ctx: ServiceContext): Promise<{ started: number; finished: number; trimmed: number; compacted: number }> {
  return inSpan('baton.maintenance.tick', {}, (traceContext) => tick({ ...ctx, traceContext }));
}

/** Trims every tenant's outbox of events older than the retention, in bounded transactions, until the tick's time is spent. */
async function trimEvents(ctx: ServiceContext, retentionMs: number, until: number): Promise<number> {
  const before = new Date(ctx.now().getTime() - retentionMs).toISOString();
  let trimmed = 0;
  let after: string | undefined;
  for (;;) {
    const page = await runTransaction(ctx, (tx) => tenants(tx, after, BATCH), { readOnly: true });
    for (const tenant of page) {
      const sealing = ctx.vault === undefined ? undefined : await ctx.vault.sealing(ctx, tenant);
      for (;;) {
        const count = await runTransaction(ctx, (tx) => new Repository(tx, tenant, sealing).events.trim(before, EVENTS_PER_BATCH));
        trimmed += count;
        if (count < EVENTS_PER_BATCH || performance.now() >= until) break;
      }
      if (performance.now() >= until) return trimmed;
    }
    if (page.length < BATCH) return trimmed;
    after = page[page.length - 1];
  }
}

async function tick(ctx: ServiceContext): Promise<{ started: number; finished: number; trimmed: number; compacted: number }> {
  const until = performance.now() + TICK_MS;
  let started = 0;
  let finished = 0;
  let compacted = 0;
  const now = ctx.now().toISOString();
  for (const due of await runTransaction(ctx, (tx) => expiredTasks(tx, now, BATCH), { readOnly: true })) {
    const command = expiryPurge(ctx, due);
    try {
      await purgeRefusal(ctx, command.actor, due.taskId);
      const step = await execute(ctx, command);
      if (step.due === false) continue;
      started += 1;
      ctx.log.info({ tenant: due.tenant, taskId: due.taskId, expiresAt: due.expiresAt }, 'task expired: purge started');
    } catch (error) {
      // A hold or a retention still running keeps the task; it is looked at again at the next tick.
      if (error instanceof AppError && (error.code === 'legal_hold' || error.code === 'retention_active' || error.code === 'not_found')) continue;
      throw error;
    }
  }
  for (const job of await runTransaction(ctx, (tx) => pendingJobs(tx, BATCH), { readOnly: true })) {
    if (performance.now() >= until) break;
    if (job.kind === 'compact') {
      compacted += await compactForPolicy(ctx, job);
      continue;
    }
    const base = systemCommand(ctx, job.tenant, job.by, `purge:${job.taskId}`);
    const step = await continuePurge(ctx, base, job.taskId, { taskId: job.taskId, purged: 0, done: false }, until);
    if (step.done) {
      finished += 1;
      ctx.log.info({ tenant: job.tenant, taskId: job.taskId }, 'task purged');
    }
  }
  // The fleet's event retention, as the store holds it: every instance trims alike.
  const trimmed = await trimEvents(ctx, (await currentSettings(ctx)).eventRetentionMs, until);
  if (trimmed > 0) ctx.log.info({ trimmed }, 'events past their retention trimmed');
  if (compacted > 0) ctx.log.info({ compacted }, 'checkpoints past keepLast compacted');
  return { started, finished, trimmed, compacted };
}

/**
 * Compacts a task down to its policy's `keepLast`, as `POST …/compact` does
 * (the same guards, audited and announced); answers how many checkpoints
 * went. A task that may not be compacted now (a hold, its retention) is
 * left: its next write asks again.
 */
async function compactForPolicy(ctx: ServiceContext, job: Job): Promise<number> {
  const base = systemCommand(ctx, job.tenant, job.by, `compact:${job.taskId}`);
  try {
    const { effective } = await readPolicy(ctx, base.actor, job.taskId);
    if (effective.keepLast !== undefined) {
      const protect = await compactionGuards(ctx, base.actor, job.taskId);
      const plan = await execute(ctx, { ...base, kind: 'task.compact', taskId: job.taskId, keepLast: effective.keepLast, protect });
      // More left (the removal bound): the job stays, and the next tick goes on.
      return plan.removed.length;
    }
  } catch (error) {
    if (!(error instanceof AppError && (error.code === 'legal_hold' || error.code === 'retention_active' || error.code === 'not_found' || error.code === 'task_purging'))) throw error;
  }
  await runTransaction(ctx, async (tx) => new Repository(tx, job.tenant).jobs.done('compact', job.taskId));
  return 0;
}

/** Runs a tick every `intervalMs` (never two at once); stop() lets the running one finish its batch. */
export function startMaintenance(ctx: ServiceContext, settings: MaintenanceSettings): Periodic {
  return dutyPeriodic(ctx, 'maintenance', settings.intervalMs, async () => {
    await maintenanceTick(ctx);
  });
}
