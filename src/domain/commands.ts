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
import type { CheckpointInput, FinalStatus } from './checkpoint.js';

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
export type Command = CheckpointCommand | RecordCorruption;

