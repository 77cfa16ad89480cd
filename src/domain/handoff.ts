/**
 * Handoffs: an agent's final checkpoint (phase `handoff`) and the child a
 * fresh agent starts from when it acknowledges, with the work carried
 * forward so nothing is redone and nothing is lost.
 *
 * @module
 */
import type { Ruled } from './changes.js';
import type { Checkpoint } from './checkpoint.js';

export const HANDOFF_TRIGGERS = ['context_limit', 'phase_complete', 'error_threshold', 'explicit'] as const;
export type HandoffTrigger = (typeof HANDOFF_TRIGGERS)[number];

/** What the side handing off says about the handoff. */
export interface HandoffOptions {
  trigger: HandoffTrigger;
  toAgentType?: string;
  toAgentId?: string;
  contextUtilization?: number;
  note?: string;
  /** The W3C traceparent of the agent that handed off, so the next agent's spans can link to it. */
  traceparent?: string;
}

export interface Handoff extends HandoffOptions {
  id: string;
  taskId: string;
  /** The final checkpoint the handoff wrote. */
  checkpointId: string;
  fromAgentId: string;
  fromAgentType?: string;
  /** The phase the work was in; the child resumes in it. */
  fromPhase?: string;
  status: 'pending' | 'acknowledged';
  createdAt: string;
  acknowledgedAt?: string;
  acknowledgedBy?: { agentId: string; agentType?: string };
  childCheckpointId?: string;
  leaseId?: string;
}

export interface HandoffRequest {
  trigger: HandoffTrigger;
  contextUtilization?: number;
}

/** The final checkpoint of a handoff: phase `handoff`, finalized with status `handoff`. */
export function handoffFinal(current: Checkpoint, request: HandoffRequest, now: string): Ruled {
  const next = structuredClone(current);
  next.executionState = { ...next.executionState, phase: 'handoff' };
  if (request.contextUtilization !== undefined) next.metrics = { ...next.metrics, contextUtilization: request.contextUtilization };
  next.status = 'finalized';
  next.finalStatus = 'handoff';
  next.finalizedAt = now;
  return { ok: true, next };
}

/** One earlier agent of a task, as the child of a handoff remembers it. */
export interface PreviousAgent {
  agentId: string;
  agentType?: string;
  iteration: number;
  checkpointId: string;
  trigger: HandoffTrigger;
  handedOffAt: string;
}

export interface Acknowledger {
  agentId: string;
  agentType?: string;
  codeVersion?: string;
  acceptCodeChange?: boolean;
}

/** An agent may resume work written under other code only when it says it accepts the change. */
export function codeVersionClash(recorded: string | undefined, declared: string | undefined, accepted: boolean | undefined): boolean {
  return recorded !== undefined && declared !== undefined && recorded !== declared && accepted !== true;
}

/**
 * The child checkpoint an acknowledging agent starts from: linked to the
 * final checkpoint, one iteration on, in the phase the work was in, with its
 * completed, pending and blocked work, decisions, constraints, files and
 * continuation prompt carried forward, and the agent that handed off added
 * to `extensions.handoff.previousAgents`.
 */
export function handoffChild(parent: Checkpoint, handoff: Handoff, agent: Acknowledger, childId: string, now: string): Checkpoint {
  const { phase: _phase, ...state } = parent.executionState;
  const executionState = { ...structuredClone(state), ...(handoff.fromPhase ? { phase: handoff.fromPhase as Checkpoint['executionState']['phase'] } : {}) };
  const earlier = (parent.extensions.handoff as { previousAgents?: PreviousAgent[] } | undefined)?.previousAgents ?? [];
  const previous: PreviousAgent = {
    agentId: parent.agentId,
    ...(parent.agentType ? { agentType: parent.agentType } : {}),
    iteration: parent.iteration,
    checkpointId: parent.id,
    trigger: handoff.trigger,
    handedOffAt: handoff.createdAt,
  };
  const child: Checkpoint = {
    id: childId,
    taskId: parent.taskId,
    agentId: agent.agentId,
    iteration: parent.iteration + 1,
    schemaVersion: parent.schemaVersion,
    status: 'active',
    version: 1,
    createdAt: now,
    updatedAt: now,
    parentId: parent.id,
    executionState,
    contextSummary: structuredClone(parent.contextSummary),
    metrics: parent.metrics.filesModified ? { filesModified: structuredClone(parent.metrics.filesModified) } : {},
    recovery: {
      lastSuccessfulState: parent.id,
      ...(parent.recovery.continuationPrompt ? { continuationPrompt: parent.recovery.continuationPrompt } : {}),
      ...(parent.recovery.rollbackInstructions ? { rollbackInstructions: parent.recovery.rollbackInstructions } : {}),
    },
    compliance: {
      ...(parent.compliance.retentionPolicy ? { retentionPolicy: parent.compliance.retentionPolicy } : {}),
      ...(parent.compliance.legalHold !== undefined ? { legalHold: parent.compliance.legalHold } : {}),
    },
    labels: { ...parent.labels },
    extensions: { ...structuredClone(parent.extensions), handoff: { handoffId: handoff.id, previousAgents: [...earlier, previous] } },
  };
  const agentType = agent.agentType ?? handoff.toAgentType ?? parent.agentType;
  if (agentType !== undefined) child.agentType = agentType;
  const codeVersion = agent.codeVersion ?? parent.codeVersion;
  if (codeVersion !== undefined) child.codeVersion = codeVersion;
  return child;
}
