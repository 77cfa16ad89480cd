/**
 * A task's story, put together from what the public API answers: its
 * checkpoints (history, with `parentId` for lineage and the ids it could not
 * verify), its audit trail (every state change: versions, handoffs, leases
 * with their epochs, recoveries, blocks) and its handoff records (trigger,
 * from and to). Pure: the timeline draws it and lists it.
 *
 * @module
 */
import type { AuditEntry, Checkpoint, Handoff, TaskInfo } from '../../src/client/types.js';
import { uuidv7Time } from './format.js';

export interface CheckpointPoint {
  id: string;
  at: string;
  agentId: string;
  broken: false;
  version: number;
  iteration: number;
  phase?: string;
  status: string;
  finalStatus?: string;
  parentId?: string;
}

/** A checkpoint the service could not verify: where and by whom it was written comes from the audit trail. */
export interface BrokenPoint {
  id: string;
  at: string;
  agentId: string;
  broken: true;
}

export type Point = CheckpointPoint | BrokenPoint;

export interface HandoffMark {
  id: string;
  at: string;
  trigger: string;
  from: string;
  /** The agent that acknowledged it, else the agent or type it was meant for. */
  to: string;
  status: string;
  checkpointId: string;
  childCheckpointId?: string;
  acknowledgedAt?: string;
}

export interface RecoveryMark {
  id: string;
  at: string;
  status: 'initiated' | 'blocked' | 'completed';
  reason?: string;
  failureKind?: string;
  agentId?: string;
  checkpointId?: string;
}

export interface LeaseSpan {
  leaseId: string;
  agentId: string;
  epoch: number;
  from: string;
  /** When it stopped being held; for a live lease, when it would expire. */
  to: string;
  end: 'live' | 'expired' | 'released' | 'superseded' | 'revoked' | 'unknown';
}

/** One line of the story in words, oldest first: an audit entry, said plainly. */
export interface StoryLine {
  seq: number;
  at: string;
  who: string;
  what: string;
  checkpointId?: string;
}

export interface Story {
  /** One lane per agent, in the order they first appear. */
  lanes: string[];
  points: Point[];
  /** Lineage: parent to child, where both are on this timeline. */
  edges: { from: string; to: string }[];
  handoffs: HandoffMark[];
  recoveries: RecoveryMark[];
  blocks: { at: string; kind: 'blocked' | 'unblocked'; reason: string }[];
  leases: LeaseSpan[];
  lines: StoryLine[];
}

export interface StoryInput {
  task: TaskInfo;
  checkpoints: readonly Checkpoint[];
  corrupted: readonly string[];
  audit: readonly AuditEntry[];
  handoffs: readonly Handoff[];
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function leaseSpans(audit: readonly AuditEntry[], task: TaskInfo): LeaseSpan[] {
  const spans = new Map<string, LeaseSpan>();
  for (const entry of audit) {
    if (!entry.action.startsWith('lease.')) continue;
    const leaseId = str(entry.details?.leaseId);
    if (leaseId === undefined) continue;
    const epoch = Number(entry.details?.epoch ?? 0);
    const expiresAt = str(entry.details?.expiresAt);
    const kind = entry.action.slice('lease.'.length);
    if (kind === 'acquired') {
      spans.set(leaseId, { leaseId, agentId: entry.actor.agentId ?? '?', epoch, from: entry.at, to: expiresAt ?? entry.at, end: 'unknown' });
      continue;
    }
    const span = spans.get(leaseId);
    if (span === undefined) continue;
    if (kind === 'renewed') span.to = expiresAt ?? span.to;
    else if (kind === 'expired') Object.assign(span, { to: expiresAt ?? entry.at, end: 'expired' });
    else if (kind === 'released' || kind === 'superseded' || kind === 'revoked') Object.assign(span, { to: entry.at, end: kind });
  }
  if (task.lease !== null) {
    const live = spans.get(task.lease.leaseId);
    if (live !== undefined) Object.assign(live, { end: 'live', to: task.lease.expiresAt });
  }
  return [...spans.values()];
}

/** What an audit entry says, in words. */
export function sentence(entry: AuditEntry, handoffs: ReadonlyMap<string, Handoff>): string {
  const d = entry.details ?? {};
  const v = entry.version !== undefined ? ` (version ${entry.version})` : '';
  switch (entry.action) {
    case 'checkpoint.created':
      return d.handoffId ? `created the checkpoint that resumes the handoff${v}` : `created a checkpoint${v}${d.parentId ? ' linked to its parent' : ''}`;
    case 'checkpoint.updated':
      return `changed a checkpoint${v}`;
    case 'checkpoint.finalized':
      return `finalized a checkpoint${v}`;
    case 'checkpoints.linked':
      return `linked a checkpoint to a parent${v}`;
    case 'checkpoint.corrupted':
      return `reported a checkpoint that no longer matches its hash (${str(d.reason) ?? 'corrupt'})`;
    case 'handoff.initiated': {
      const handoff = [...handoffs.values()].find((h) => h.checkpointId === entry.checkpointId);
      return handoff ? `handed off (${handoff.trigger}): ${handoff.fromAgentId} → ${handoffTarget(handoff)}${v}` : `handed off${v}`;
    }
    case 'handoff.acknowledged':
      return 'acknowledged the handoff and took the task';
    case 'lease.acquired':
      return `took the lease, epoch ${String(d.epoch)}`;
    case 'lease.renewed':
      return `renewed the lease, epoch ${String(d.epoch)}`;
    case 'lease.released':
    case 'lease.superseded':
    case 'lease.revoked':
    case 'lease.expired':
      return `lease of epoch ${String(d.epoch)} ${entry.action.slice('lease.'.length)}`;
    case 'recovery.initiated': {
      const failure = d.failure as { kind?: string } | undefined;
      return `started a recovery after a ${failure?.kind ?? 'failure'}: ${str(d.reason) ?? ''}`;
    }
    case 'recovery.blocked':
      return `recovery blocked (${str(d.reason) ?? 'blocked'}): the task is blocked`;
    case 'recovery.completed':
      return 'completed the recovery and took the task';
    case 'task.unblocked':
      return 'unblocked the task';
    case 'task.state':
      return `set the task state from ${String(d.from)} to ${String(d.to)}`;
    case 'task.purged':
      return `purged the task's checkpoints (${String(d.checkpoints)})`;
    default:
      return entry.action;
  }
}

export function handoffTarget(handoff: Handoff): string {
  return handoff.acknowledgedBy?.agentId ?? handoff.toAgentId ?? handoff.toAgentType ?? 'any agent';
}

export function buildStory({ task, checkpoints, corrupted, audit, handoffs }: StoryInput): Story {
  const byId = new Map(handoffs.map((h) => [h.id, h]));
  const created = new Map<string, AuditEntry>();
  for (const entry of audit) if (entry.action === 'checkpoint.created' && entry.checkpointId) created.set(entry.checkpointId, entry);

  const points: Point[] = checkpoints.map((c) => ({
    id: c.id,
    at: c.createdAt,
    agentId: c.agentId,
    broken: false,
    version: c.version,
    iteration: c.iteration,
    status: c.status,
    ...(c.executionState.phase ? { phase: c.executionState.phase } : {}),
    ...(c.finalStatus ? { finalStatus: c.finalStatus } : {}),
    ...(c.parentId ? { parentId: c.parentId } : {}),
  }));
  for (const id of corrupted) {
    const entry = created.get(id);
    points.push({ id, broken: true, at: entry?.at ?? uuidv7Time(id) ?? task.updatedAt, agentId: entry?.actor.agentId ?? 'unknown agent' });
  }
  points.sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id));

  const onTimeline = new Set(points.map((p) => p.id));
  const edges = points.flatMap((p) => (!p.broken && p.parentId && onTimeline.has(p.parentId) ? [{ from: p.parentId, to: p.id }] : []));

  const handoffMarks: HandoffMark[] = handoffs
    .map((h) => ({
      id: h.id,
      at: h.createdAt,
      trigger: h.trigger,
      from: h.fromAgentId,
      to: handoffTarget(h),
      status: h.status,
      checkpointId: h.checkpointId,
      ...(h.childCheckpointId ? { childCheckpointId: h.childCheckpointId } : {}),
      ...(h.acknowledgedAt ? { acknowledgedAt: h.acknowledgedAt } : {}),
    }))
    .sort((a, b) => a.at.localeCompare(b.at));

  const recoveries: RecoveryMark[] = [];
  const blocks: Story['blocks'] = [];
  for (const entry of audit) {
    const d = entry.details ?? {};
    if (entry.action.startsWith('recovery.')) {
      const status = entry.action.slice('recovery.'.length) as RecoveryMark['status'];
      const failure = d.failure as { kind?: string } | undefined;
      recoveries.push({
        id: str(d.recoveryId) ?? '',
        at: entry.at,
        status,
        ...(str(d.reason) ? { reason: str(d.reason)! } : {}),
        ...(failure?.kind ? { failureKind: failure.kind } : {}),
        ...(entry.actor.agentId ? { agentId: entry.actor.agentId } : {}),
        ...(entry.checkpointId ? { checkpointId: entry.checkpointId } : {}),
      });
      if (status === 'blocked') blocks.push({ at: entry.at, kind: 'blocked', reason: str(d.reason) ?? 'blocked' });
    }
    if (entry.action === 'task.unblocked') blocks.push({ at: entry.at, kind: 'unblocked', reason: str(d.reason) ?? '' });
  }

  const leases = leaseSpans(audit, task);
  const lanes: string[] = [];
  const firstSeen = [...points.map((p) => ({ at: p.at, agent: p.agentId })), ...leases.map((l) => ({ at: l.from, agent: l.agentId }))].sort((a, b) => a.at.localeCompare(b.at));
  for (const { agent } of firstSeen) if (!lanes.includes(agent)) lanes.push(agent);

  const lines: StoryLine[] = audit.map((entry) => ({
    seq: entry.seq,
    at: entry.at,
    who: entry.actor.agentId ?? `${entry.actor.role} ${entry.actor.subject}`,
    what: sentence(entry, byId),
    ...(entry.checkpointId ? { checkpointId: entry.checkpointId } : {}),
  }));

  return { lanes, points, edges, handoffs: handoffMarks, recoveries, blocks, leases, lines };
}
