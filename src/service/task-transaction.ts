/**
 * The task transaction, the one write path. Every command is applied inside
 * one: it reads the task head (which serializes writes to one task and leaves
 * other tasks alone), checks the fencing token, applies the change, seals its
 * audit entries onto the task's chain, adds its events to the outbox, writes
 * the head back, and records the operation id with the result so that a
 * repeat applies once.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { GENESIS_HASH, sealEntries, type AuditDraft } from '../domain/audit.js';
import type { Command, CommandBase } from '../domain/commands.js';
import type { CloudEvent, EventDraft } from '../domain/events.js';
import { fencing } from '../domain/leases.js';
import { annotate, currentTraceparent } from '../telemetry/tracing.js';
import { addDuration, effectivePolicy, type TaskPolicy } from '../domain/retention.js';
import { policyDefaults } from './fleet/settings.js';
import { AppError } from '../errors.js';
import type { ServiceContext } from './context.js';
import { OperationReusedError, Repository, type TaskHead } from './repository/repository.js';
import { runTransaction } from './transactions.js';
import { clearApart, runsReader } from './indexer/runs-apart.js';

/** What a change sees inside the transaction. */
export interface TaskWrite {
  repo: Repository;
  head: TaskHead;
  /** The command's time. */
  now: string;
  /**
   * No earlier run of this change can have committed anything of its own: the
   * first run of the transaction's body for a command made in this process
   * (not a queued write's replay). Ids minted for the command are then known
   * to be absent from the store, and need no look-up.
   */
  firstRun: boolean;
  /** The tenant defaults under the task's policy, as the store holds them in this transaction (`fleet/settings.ts`). */
  defaults: TaskPolicy;
  audit(draft: Omit<AuditDraft, 'at' | 'actor'> & { agentId?: string }): void;
  event(draft: EventDraft): void;
  /**
   * The change found its effect already in the store (a create replayed
   * after its operation record expired): nothing is written — no audit
   * entry, no event, the head as it was — and the write answers as a repeat.
   */
  unchanged(): void;
}

/**
 * Applies `change` to task `taskId` for `command`, exactly once per
 * operation id. Returns the change's result (plain data), or the recorded
 * result of the first application when the operation id was seen before.
 * `change` may run more than once: it must only touch the transaction.
 */
export async function runInTask<T>(
  ctx: ServiceContext,
  command: CommandBase & { kind: Command['kind'] },
  taskId: string,
  change: (write: TaskWrite) => Promise<T>,
): Promise<{ result: T; replayed: boolean }> {
  const { actor, at: now } = command;
  annotate(ctx, () => commandAttributes(command as Command, taskId));
  // The trace of the request that causes the change, for its events and the next agent's link to it.
  const traceparent = currentTraceparent(ctx);
  // Set by the attempt that runs the change; a body the store runs again starts it over.
  let unchanged = false;

  const apply = async (repo: Repository, firstRun: boolean): Promise<T> => {
    unchanged = false;
    // The header, the head and the tenant's settings are read side by side: over FoundationDB one round trip, not three.
    // The header is looked at first all the same (DESIGN §10: read in every write, not once per process, since another
    // instance may have raised the format): what a newer format wrote is not decoded before it is refused.
    const header = repo.header.ensure();
    const reads = Promise.all([repo.tasks.head(taskId), policyDefaults(ctx, repo)]);
    reads.catch(() => undefined);
    if ((await header) === undefined) throw new AppError('store_format_unsupported');
    const [existing, defaults] = await reads;
    const head: TaskHead = existing ?? { taskId, seq: 0, audit: { seq: 0, hash: GENESIS_HASH }, createdAt: now, updatedAt: now };
    if (head.purging !== undefined && !PURGE_KINDS.has(command.kind)) throw new AppError('task_purging');
    if (FENCED.has(command.kind)) checkFencing(head, command.leaseEpoch, now);
    const drafts: AuditDraft[] = [];
    const events: CloudEvent[] = [];
    const result = await change({
      repo,
      head,
      now,
      firstRun,
      defaults,
      audit: ({ agentId, ...draft }) =>
        drafts.push({ ...draft, at: now, actor: { subject: actor.subject, role: actor.role, ...(agentId ? { agentId } : {}) } }),
      event: (draft) => events.push(cloudEvent(ctx, actor.tenant, taskId, draft, now, traceparent)),
      unchanged: () => {
        unchanged = true;
      },
    });
    if (unchanged) {
      if (drafts.length > 0 || events.length > 0) throw new Error('A change that wrote audit entries or events cannot be unchanged.');
      return result;
    }
    const sealed = sealEntries(taskId, head.audit, drafts);
    repo.audit.append(sealed.entries);
    head.audit = sealed.tip;
    head.updatedAt = now;
    if (traceparent !== undefined) head.traceparent = traceparent;
    noteExpiry(defaults, repo, head, now);
    if (!SWEEPER_KINDS.has(command.kind)) noteCompaction(defaults, repo, head, now);
    await repo.tasks.putHead(head);
    repo.events.append(events);
    // Other instances' streams of the tenant wake through the store (`fleet/event-feed.ts`).
    if (events.length > 0 && ctx.store.watch !== undefined) repo.events.tick();
    return result;
  };

  // A client's key is always recorded, for its retries, and an id chosen to apply once; a queued write too, for a
  // replay after a crash; a minted id otherwise only where a store may run a committed body again, and not for a
  // write whose own rows say it was applied (a create's new checkpoint id: its rerun finds it, `checkpoint-writes.ts`).
  const recorded = command.idempotency !== undefined || command.fromQueue === true || (!ctx.store.commitOutcomeKnown && !SELF_RECORDED.has(command.kind));
  // The attempt that committed: whether it left words for the indexer.
  let committed: Repository | undefined;
  // Runs of the body so far: a store runs it again after a conflict or a commit whose outcome it could not learn.
  let runs = 0;
  const apart = runsReader(ctx);
  const transaction = async () => {
    const sealing = ctx.vault === undefined ? undefined : await ctx.vault.sealing(ctx, actor.tenant);
    return runTransaction(ctx, (tx) => {
      const repo = new Repository(tx, actor.tenant, sealing, apart);
      committed = repo;
      const firstRun = runs++ === 0 && command.fromQueue !== true;
      // An id minted for this command (`commands.ts`) is not recorded before its body's first run has committed.
      const unrecorded = firstRun && command.idempotency === undefined;
      return recorded
        ? repo.operations.once(command.operationId, command.idempotency === 'client', `${command.kind}:${command.fingerprint}`, () => apply(repo, firstRun), unrecorded)
        : apply(repo, firstRun).then((result) => ({ result, applied: true }));
    });
  };
  try {
    if (command.kind === 'checkpoint.create') {
      await ctx.indexer?.admit();
      const held = ctx.pendingGate?.admit(actor.tenant);
      if (held !== undefined) await held;
    }
    const outcome = await (ctx.lanes ? ctx.lanes.run(`${actor.tenant}\u0000${taskId}`, transaction) : transaction());
    ctx.notifier.notify(actor.tenant);
    if (committed?.terms.pending.added === true) ctx.indexer?.poke();
    if (ctx.runsApart !== undefined && committed !== undefined) await clearApart(ctx, ctx.runsApart.store, committed.terms.clearedApart);
    return { result: outcome.result, replayed: !outcome.applied || unchanged };
  } catch (error) {
    if (error instanceof OperationReusedError) throw new AppError('idempotency_key_reused');
    throw error;
  }
}

/**
 * The writes whose effect names an id minted with the command, so that a run
 * after a commit whose outcome was unknown finds the first run's effect by
 * that id and answers as its repeat: no operation record is needed (over
 * FoundationDB two keys fewer a create, the record and its age entry).
 */
const SELF_RECORDED: ReadonlySet<Command['kind']> = new Set(['checkpoint.create']);

/** The purge's own steps are the only writes a task takes while it is being purged. */
const PURGE_KINDS: ReadonlySet<Command['kind']> = new Set(['task.purge', 'task.purge_page']);

/** The writes that never ask for a compaction: the compaction itself, and the purge's. */
const SWEEPER_KINDS: ReadonlySet<Command['kind']> = new Set(['task.compact', 'task.purge', 'task.purge_page']);

/**
 * Asks the retention sweeper to compact a task that has had more checkpoints
 * than its policy's `keepLast` (one small key, rewritten by each write);
 * the sweeper's compaction finds what, if anything, may go.
 */
function noteCompaction(defaults: TaskPolicy, repo: Repository, head: TaskHead, now: string): void {
  const { keepLast } = effectivePolicy(head.policy, defaults);
  if (keepLast === undefined || head.seq <= keepLast || head.purging !== undefined || head.legalHold !== undefined) return;
  repo.jobs.put({ kind: 'compact', taskId: head.taskId, startedAt: now, by: 'baton:retention-sweeper' });
}

/** Notes when the policy's `expireAfter` lets the task go, counted from this write (none for a task without checkpoints). */
function noteExpiry(defaults: TaskPolicy, repo: Repository, head: TaskHead, now: string): void {
  const { expireAfter } = effectivePolicy(head.policy, defaults);
  const expiresAt = expireAfter !== undefined && head.latestId !== undefined && head.purging === undefined ? new Date(addDuration(now, expireAfter)).toISOString() : undefined;
  repo.jobs.expiry(head.taskId, expiresAt, head.expiresAt);
  if (expiresAt === undefined) delete head.expiresAt;
  else head.expiresAt = expiresAt;
}

/** The CloudEvent of `draft`, about task `taskId`. */
export function cloudEvent(ctx: ServiceContext, tenant: string, taskId: string, draft: EventDraft, now: string, traceparent = currentTraceparent(ctx)): CloudEvent {
  return {
    specversion: '1.0',
    // A rerun body may mint other event ids: only the attempt that commits is ever seen.
    id: randomUUID(),
    source: ctx.eventSource,
    type: draft.type,
    time: now,
    subject: draft.subject,
    datacontenttype: 'application/json',
    ...(traceparent !== undefined ? { traceparent } : {}),
    data: { tenant, taskId, ...draft.data },
  };
}

/** The GenAI and Baton attributes a command gives its request's span. */
function commandAttributes(command: Command, taskId: string): Record<string, string | number | undefined> {
  const fields = command as { agentId?: string; checkpointId?: string; handoffId?: string; input?: { agentId?: string; agentType?: string }; agentType?: string };
  return {
    'gen_ai.conversation.id': taskId,
    'gen_ai.agent.id': fields.agentId ?? fields.input?.agentId,
    'gen_ai.agent.name': fields.agentType ?? fields.input?.agentType,
    'baton.checkpoint.id': fields.checkpointId,
    'baton.handoff.id': fields.handoffId,
    'baton.lease.epoch': command.leaseEpoch,
    'baton.command': command.kind,
  };
}

/**
 * The writes an agent makes to its task's work, which a lease fences. The
 * protocol's own steps (leases, acknowledgments, recoveries, state changes)
 * are how an orchestrator takes a task away from an agent, so they are not.
 */
const FENCED: ReadonlySet<Command['kind']> = new Set(['checkpoint.create', 'checkpoint.update', 'checkpoint.finalize', 'checkpoint.link', 'handoff.start']);

function checkFencing(head: TaskHead, epoch: number | undefined, now: string): void {
  const refusal = fencing({ epoch: head.epoch ?? 0, ...(head.lease ? { lease: head.lease } : {}) }, epoch, now);
  if (refusal === undefined) return;
  if (refusal.code === 'lease_epoch_unknown') {
    throw new AppError('validation_failed', { errors: [{ field: 'headers.baton-lease-epoch', message: 'names no lease this task granted' }], extra: { epoch: refusal.epoch } });
  }
  throw new AppError(refusal.code, { extra: { epoch: refusal.epoch } });
}
