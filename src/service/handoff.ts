/**
 * Handoffs: an agent hands its task off by finalizing its checkpoint in
 * phase `handoff` (AGENT_HANDOFF); a fresh agent acknowledges, which in one
 * transaction creates the child checkpoint it starts from, grants it the
 * task's lease one epoch up, and announces HANDOFF_ACKNOWLEDGED and
 * LEASE_ACQUIRED. Acknowledging again as the same agent answers the same; a
 * different agent is refused.
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import type { AcknowledgeHandoff, Actor, StartHandoff } from '../domain/commands.js';
import { codeVersionClash, handoffChild, type Handoff } from '../domain/handoff.js';
import { LEASE_TTL_MS, type Lease } from '../domain/leases.js';
import { AppError } from '../errors.js';
import { getCheckpoint } from './checkpoint-reads.js';
import { answer, changeCheckpoint, placeNewest, prepare, summary, type Prepared } from './checkpoint-writes.js';
import { snapshot, type ServiceContext } from './context.js';
import { grantLease, retire } from './leases.js';
import type { CheckpointDoc } from './repository/repository.js';
import { resumePrompt } from './resume-prompt.js';
import { linkTo } from '../telemetry/tracing.js';
import { present } from './invariants.js';
import { runInTask } from './task-transaction.js';

export interface HandoffStarted {
  handoff: Handoff;
  checkpoint: CheckpointDoc;
  /** What the next agent should be told to resume: the checkpoint's own prompt, or one made from it. */
  continuationPrompt: string;
  replayed: boolean;
}

/** POST /v1/checkpoints/:id/handoff. */
export async function startHandoff(ctx: ServiceContext, command: StartHandoff): Promise<HandoffStarted> {
  const written = await changeCheckpoint(
    ctx,
    command,
    command.checkpointId,
    'handoff.initiated',
    {
      after: async (write, final, hash, before) => {
        const { repo, head, now } = write;
        if (head.openHandoff !== undefined) throw new AppError('handoff_pending', { extra: { handoffId: head.openHandoff } });
        const handoff = handoffRecord(command, final, before.executionState.phase, now);
        await repo.handoffs.put(handoff);
        // The agent that hands off stops being the writer now, not when its lease would run out (a false crash signal).
        await retire(write, 'released');
        head.openHandoff = handoff.id;
        head.state = 'handing-off';
        write.event({ type: 'CHECKPOINT_FINALIZED', subject: final.id, data: { ...summary(final, hash), finalStatus: 'handoff' } });
        write.event({ type: 'AGENT_HANDOFF', subject: handoff.id, data: handoffData(handoff) });
        return { handoffId: handoff.id };
      },
    },
  );
  const handoff = await readHandoff(ctx, command.actor, present(written.extra.handoffId, 'a handoff start records its handoff id'));
  if (!written.replayed) ctx.metrics.handoffs.inc({ stage: 'initiated' });
  await updateSuccessRate(ctx);
  return { handoff, checkpoint: written.doc, continuationPrompt: handoffPrompt(written.doc.checkpoint, handoff), replayed: written.replayed };
}

/**
 * What the next agent is told: the resume prompt of the final checkpoint as
 * the work stood, in the phase it was in (the final checkpoint's own phase is
 * `handoff`), with the handing agent's note beside its continuation prompt,
 * fitted to `budget` tokens when given.
 */
export function handoffPrompt(final: Checkpoint, handoff: Handoff, budget?: number): string {
  const own = final.recovery.continuationPrompt;
  const note = handoff.note === undefined ? undefined : `Note from ${handoff.fromAgentId}, who handed off (${handoff.trigger}): ${handoff.note}`;
  const continuation = [own, note].filter((part): part is string => typeof part === 'string' && part.trim() !== '').join('\n\n');
  const view: Checkpoint = {
    ...final,
    executionState: { ...final.executionState, ...(handoff.fromPhase !== undefined ? { phase: handoff.fromPhase as Checkpoint['executionState']['phase'] } : {}) },
    recovery: { ...final.recovery, ...(continuation !== '' ? { continuationPrompt: continuation } : {}) },
  };
  return resumePrompt(view, budget).text;
}

function handoffRecord(command: StartHandoff, final: Checkpoint, previousPhase: string | undefined, now: string): Handoff {
  const handoff: Handoff = {
    id: command.handoffId,
    taskId: final.taskId,
    checkpointId: final.id,
    fromAgentId: final.agentId,
    trigger: command.trigger,
    status: 'pending',
    createdAt: now,
  };
  if (final.agentType !== undefined) handoff.fromAgentType = final.agentType;
  if (previousPhase !== undefined) handoff.fromPhase = previousPhase;
  for (const field of ['toAgentType', 'toAgentId', 'contextUtilization', 'note', 'traceparent'] as const) {
    if (command[field] !== undefined) Object.assign(handoff, { [field]: command[field] });
  }
  return handoff;
}

function handoffData(handoff: Handoff): Record<string, unknown> {
  const { id, status: _status, ...rest } = handoff;
  return { handoffId: id, ...rest };
}

export interface HandoffAcknowledged {
  handoff: Handoff;
  checkpoint: CheckpointDoc;
  lease: Lease;
  replayed: boolean;
}

/** POST /v1/handoffs/:id/ack. */
export async function acknowledgeHandoff(ctx: ServiceContext, command: AcknowledgeHandoff): Promise<HandoffAcknowledged> {
  const handoff = await readHandoff(ctx, command.actor, command.handoffId);
  // One trace follows the task across agents: the taking agent's span links to the handing agent's.
  linkTo(ctx, handoff.traceparent, { 'baton.link': 'handoff', 'baton.handoff.id': handoff.id });
  // The final checkpoint is immutable, so the child and its hash are made once, outside the transaction.
  const parent = (await getCheckpoint(ctx, command.actor, handoff.checkpointId)).checkpoint;
  const child = handoffChild(parent, handoff, command, command.checkpointId, command.at);
  const first = prepare(ctx, child);
  let prepared: Prepared = first;
  const { result, replayed } = await runInTask(ctx, command, handoff.taskId, async (write) => {
    const { repo, head, now } = write;
    const current = present(await repo.handoffs.get(handoff.id), 'a handoff read before the transaction still exists inside it');
    if (current.status === 'acknowledged') {
      if (current.acknowledgedBy?.agentId !== command.agentId) throw new AppError('handoff_taken', { extra: { handoffId: current.id } });
      return { checkpointId: present(current.childCheckpointId, 'an acknowledged handoff names its child'), leaseId: present(current.leaseId, 'an acknowledged handoff names its lease') };
    }
    if ((current.toAgentId !== undefined && current.toAgentId !== command.agentId) || (current.toAgentType !== undefined && command.agentType !== undefined && current.toAgentType !== command.agentType)) {
      throw new AppError('handoff_not_for_agent', { extra: { handoffId: current.id } });
    }
    if (codeVersionClash(parent.codeVersion, command.codeVersion, command.acceptCodeChange)) {
      throw new AppError('code_version_mismatch', { extra: { codeVersion: parent.codeVersion } });
    }
    const placed = await placeNewest(ctx, repo, head, child, first);
    prepared = placed.prepared;
    head.seq += 1;
    head.latestId = child.id;
    head.latestAt = placed.checkpoint.createdAt;
    await repo.checkpoints.insert(placed.checkpoint, prepared.stored, head.seq, placed.previous);
    repo.links.link(parent.id, child.id);
    write.audit({ action: 'checkpoint.created', checkpointId: child.id, version: 1, afterHash: prepared.hash, agentId: child.agentId, details: { parentId: parent.id, handoffId: handoff.id } });
    write.audit({ action: 'handoff.acknowledged', checkpointId: child.id, agentId: command.agentId, details: { handoffId: handoff.id } });
    write.event({ type: 'CHECKPOINT_CREATED', subject: child.id, data: summary(placed.checkpoint, prepared.hash) });
    write.event({ type: 'CHECKPOINTS_LINKED', subject: child.id, data: { parentId: parent.id, childId: child.id } });
    const acknowledged: Handoff = {
      ...current,
      status: 'acknowledged',
      acknowledgedAt: now,
      acknowledgedBy: { agentId: command.agentId, ...(child.agentType ? { agentType: child.agentType } : {}) },
      childCheckpointId: child.id,
      leaseId: command.leaseId,
    };
    await repo.handoffs.put(acknowledged);
    write.event({ type: 'HANDOFF_ACKNOWLEDGED', subject: handoff.id, data: handoffData(acknowledged) });
    await grantLease(write, command.leaseId, command.agentId, command.ttlMs ?? LEASE_TTL_MS.default);
    delete head.openHandoff;
    head.state = 'working';
    return { checkpointId: child.id, leaseId: command.leaseId };
  });
  const fresh = !replayed && result.checkpointId === child.id;
  if (fresh) ctx.metrics.handoffs.inc({ stage: 'acknowledged' });
  await updateSuccessRate(ctx);
  const [acknowledged, written, lease] = await Promise.all([
    readHandoff(ctx, command.actor, handoff.id),
    answer(ctx, command, { checkpointId: result.checkpointId, version: 1 }, !fresh, fresh ? prepared.stored : undefined),
    snapshot(ctx, command.actor.tenant, (repo) => repo.leases.get(result.leaseId)),
  ]);
  return { handoff: acknowledged, checkpoint: written.doc, lease: present(lease, 'an acknowledgment grants a lease'), replayed: !fresh };
}

/** GET /v1/handoffs/:id. */
export async function readHandoff(ctx: ServiceContext, actor: Actor, handoffId: string): Promise<Handoff> {
  const handoff = await snapshot(ctx, actor.tenant, (repo) => repo.handoffs.get(handoffId));
  if (handoff === undefined) throw new AppError('not_found', { detail: 'No handoff with this id exists.' });
  return handoff;
}

/** The prompt a successor resumes from: the checkpoint's own continuation prompt, or the resume prompt made from it. */
export function continuationPrompt(checkpoint: Checkpoint): string {
  return checkpoint.recovery.continuationPrompt ?? resumePrompt(checkpoint).text;
}

/** `handoff_success_rate`: handoffs acknowledged over handoffs initiated, in this process. */
async function updateSuccessRate(ctx: ServiceContext): Promise<void> {
  const { values } = await ctx.metrics.handoffs.get();
  const count = (stage: string): number => values.filter((v) => v.labels.stage === stage).reduce((sum, v) => sum + v.value, 0);
  const initiated = count('initiated');
  if (initiated > 0) ctx.metrics.handoffSuccessRate.set(Math.min(1, count('acknowledged') / initiated));
}
