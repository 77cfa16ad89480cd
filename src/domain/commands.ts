/**
 * Writes as commands. Every state change is a plain, serialisable command:
 * routes build one from a request and the service's `execute` applies it
 * through the task transaction, the one write path. Because a command is
 * data, the write queue can persist it and replay it later, and its
 * `operationId`, recorded in the same transaction as its effect, makes every
 * repeat apply once.
 *
 * @module
 */
import type { Checkpoint, CheckpointInput, FinalStatus } from './checkpoint.js';
import type { HandoffOptions } from './handoff.js';
import type { Failure } from './recovery.js';
import type { SettableState } from './task-state.js';

/** Who asks: the token's tenant, role and subject. */
export interface Actor {
  tenant: string;
  role: 'writer' | 'auditor' | 'admin';
  subject: string;
}

/** What every command carries besides its own fields. */
export interface CommandBase {
  /**
   * The logical write's id, minted before any transaction: `key:<Idempotency-Key>`
   * when the client sent one (its first answer is kept for retries), else `op:<uuid>`.
   */
  operationId: string;
  /** A digest of the request; the same `key:` id with another fingerprint is refused. */
  fingerprint: string;
  actor: Actor;
  /** When the command was issued (ISO 8601): the time the change records. */
  at: string;
  /** The fencing token sent with the write (`Baton-Lease-Epoch`), if any. */
  leaseEpoch?: number;
  /** Set when the write queue replays the command: its operation is always recorded, so a second replay is a no-op. */
  fromQueue?: boolean;
}

export interface CreateCheckpoint extends CommandBase {
  kind: 'checkpoint.create';
  taskId: string;
  /** Minted with the command, so a replay creates the same checkpoint. */
  checkpointId: string;
  input: CheckpointInput;
}

/** Commands on an existing checkpoint name it; `execute` finds its task. */
export interface UpdateCheckpoint extends CommandBase {
  kind: 'checkpoint.update';
  checkpointId: string;
  /** A JSON Merge Patch (RFC 7396). */
  patch: unknown;
  ifMatch?: number;
}

export interface FinalizeCheckpoint extends CommandBase {
  kind: 'checkpoint.finalize';
  checkpointId: string;
  status: FinalStatus;
  signature?: { meaning: string };
  ifMatch?: number;
}

export interface LinkCheckpoints extends CommandBase {
  kind: 'checkpoint.link';
  parentId: string;
  childId: string;
}

/** Reads that find a corrupt record send this once per record (`integrity.ts`). */
export interface RecordCorruption extends CommandBase {
  kind: 'checkpoint.corrupted';
  taskId: string;
  checkpointId: string;
  version?: number;
  reason: string;
}

export type CheckpointCommand = CreateCheckpoint | UpdateCheckpoint | FinalizeCheckpoint | LinkCheckpoints;

/** An agent taking over a task: by acknowledging a handoff or completing a recovery. */
export interface Successor {
  agentId: string;
  agentType?: string;
  /** The agent's code or graph fingerprint; refused against another recorded one unless `acceptCodeChange`. */
  codeVersion?: string;
  acceptCodeChange?: boolean;
  /** The lease it is granted (default 60 s). */
  ttlMs?: number;
  /** Minted with the command, so a replay grants the same lease. */
  leaseId: string;
}

export interface AcquireLease extends CommandBase {
  kind: 'lease.acquire';
  taskId: string;
  leaseId: string;
  agentId: string;
  ttlMs: number;
}

/** Commands on a lease name it; `execute` finds its task. */
export interface RenewLease extends CommandBase {
  kind: 'lease.renew';
  leaseId: string;
  ttlMs?: number;
}

export interface ReleaseLease extends CommandBase {
  kind: 'lease.release';
  leaseId: string;
}

/** The sweeper's: a lease that reached its expiry unrenewed ends, announced once. */
export interface ExpireLease extends CommandBase {
  kind: 'lease.expire';
  taskId: string;
  leaseId: string;
  expiresAt: string;
}

export interface StartHandoff extends CommandBase, HandoffOptions {
  kind: 'handoff.start';
  /** The checkpoint the handoff finalizes. */
  checkpointId: string;
  handoffId: string;
}

export interface AcknowledgeHandoff extends CommandBase, Successor {
  kind: 'handoff.ack';
  handoffId: string;
  /** The child checkpoint's id, minted with the command. */
  checkpointId: string;
}

export interface StartRecovery extends CommandBase {
  kind: 'recovery.start';
  taskId: string;
  recoveryId: string;
  reason: string;
  failure: Failure;
}

export interface CompleteRecovery extends CommandBase, Successor {
  kind: 'recovery.complete';
  recoveryId: string;
}

/** An admin's: the circuit breaker is closed again and the task may be recovered. */
export interface UnblockTask extends CommandBase {
  kind: 'task.unblock';
  taskId: string;
  reason?: string;
}

export interface SetTaskState extends CommandBase {
  kind: 'task.state';
  taskId: string;
  state: SettableState;
  reason?: string;
}

/** Removes every checkpoint of a task; its head and audit chain stay, with a tombstone entry. */
export interface PurgeTask extends CommandBase {
  kind: 'task.purge';
  taskId: string;
}

/** The writes the local queue accepts while the store is unavailable: an agent's own checkpoint writes and its handoff. */
export type QueueableCommand = CheckpointCommand | StartHandoff;

/** The checkpoint a queueable command changes (a link changes its child). */
export function checkpointOf(command: QueueableCommand): string {
  return command.kind === 'checkpoint.link' ? command.childId : command.checkpointId;
}

/** The answer to a write the local queue accepted for later: what the client will see once it applies. */
export interface Queued {
  queued: true;
  operationId: string;
  checkpointId: string;
  /** The version the write makes, when it is known now (a create; a change with If-Match, or over a queued checkpoint). */
  version?: number;
  /** The checkpoint as it will be, when the queue knows it whole (a queued create and what is queued after it). */
  checkpoint?: Checkpoint;
  handoffId?: string;
}

export type LeaseCommand = AcquireLease | RenewLease | ReleaseLease | ExpireLease;
export type ProtocolCommand = LeaseCommand | StartHandoff | AcknowledgeHandoff | StartRecovery | CompleteRecovery | UnblockTask | SetTaskState | PurgeTask;
export type Command = CheckpointCommand | RecordCorruption | ProtocolCommand;

