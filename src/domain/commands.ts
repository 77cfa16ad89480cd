/**
 * Writes as commands. Every state change is a plain, serialisable command,
 * declared here as a zod schema (its type is inferred from it): routes, MCP
 * tools and the CLI build one, the service's `execute` applies it through
 * the task transaction, and the write queue persists it, validates it again
 * when it reads it back, and replays it. The `operationId`, recorded in the
 * same transaction as the effect, makes every repeat apply once.
 *
 * The rules of a change to an existing checkpoint are one table
 * (`CHANGE_RULES`), applied by `applyChange` for the live write path and for
 * the queue's view of writes still waiting alike.
 *
 * @module
 */
import { z } from 'zod';
import { buildCheckpoint, changeable, finalize, linkTo, mergePatch, nextVersion, type Ruled } from './changes.js';
import { checkpointId, checkpointInput, externalId, type Checkpoint } from './checkpoint.js';
import { handoffFinal } from './handoff.js';
import { failureSchema, finalizeBody, handoffBody, leaseTtlMs, successorBody, taskStateBody } from './requests.js';

export const ROLE_NAMES = ['writer', 'auditor', 'admin'] as const;

/** Who asks: the token's tenant, role and subject. */
export const actorSchema = z.object({ tenant: z.string().min(1), role: z.enum(ROLE_NAMES), subject: z.string().min(1) });
export type Actor = z.infer<typeof actorSchema>;

/**
 * How an operation is recorded. `client`: the client's Idempotency-Key
 * (`operationId` is `key:<key>`), kept for its retries and refused with
 * another request. `once`: an id the service chose so that a write applies
 * once across processes and replays (a corruption report). Absent: an id
 * minted per request, recorded only where the store may run a committed body
 * again, or when the queue replays it.
 */
export const IDEMPOTENCY = ['client', 'once'] as const;

/** What every command carries besides its own fields. */
const base = {
  /** The logical write's id, minted before any transaction, so a body that runs twice records one operation. */
  operationId: z.string().min(1).max(400),
  idempotency: z.enum(IDEMPOTENCY).optional(),
  /** A digest of the request; the same client key with another fingerprint is refused. */
  fingerprint: z.string(),
  actor: actorSchema,
  /** When the command was issued (ISO 8601): the time the change records. */
  at: z.string().min(1),
  /** The fencing token sent with the write (`Baton-Lease-Epoch`), if any. */
  leaseEpoch: z.number().int().nonnegative().optional(),
  /** Set when the write queue replays the command: its operation is always recorded, so a second replay is a no-op. */
  fromQueue: z.boolean().optional(),
};

export const commandBaseSchema = z.object(base);
export type CommandBase = z.infer<typeof commandBaseSchema>;

const command = <K extends string, S extends z.ZodRawShape>(kind: K, shape: S) => z.object({ kind: z.literal(kind), ...base, ...shape });

const ifMatch = z.number().int().min(1).optional();
const uuid = z.string().min(1).max(100);

export const createCheckpointCommand = command('checkpoint.create', {
  taskId: externalId,
  /** Minted new with the command, so a replay creates the same checkpoint, and a live create's first run need not look for it. */
  checkpointId,
  input: checkpointInput,
});
/** Commands on an existing checkpoint name it; `execute` finds its task. */
export const updateCheckpointCommand = command('checkpoint.update', { checkpointId, /** A JSON Merge Patch (RFC 7396). */ patch: z.unknown(), ifMatch });
export const finalizeCheckpointCommand = command('checkpoint.finalize', { checkpointId, ...finalizeBody.shape, ifMatch });
export const linkCheckpointsCommand = command('checkpoint.link', { parentId: checkpointId, childId: checkpointId });
/** Reads that find a corrupt record send this once per record (`integrity.ts`). */
export const recordCorruptionCommand = command('checkpoint.corrupted', { taskId: externalId, checkpointId, version: z.number().int().optional(), reason: z.string() });

export const acquireLeaseCommand = command('lease.acquire', { taskId: externalId, leaseId: uuid, agentId: externalId, ttlMs: leaseTtlMs });
export const renewLeaseCommand = command('lease.renew', { leaseId: uuid, ttlMs: leaseTtlMs.optional() });
export const releaseLeaseCommand = command('lease.release', { leaseId: uuid });
/** The sweeper's: a lease that reached its expiry unrenewed ends, announced once. */
export const expireLeaseCommand = command('lease.expire', { taskId: externalId, leaseId: uuid, expiresAt: z.string() });

export const startHandoffCommand = command('handoff.start', {
  /** The checkpoint the handoff finalizes. */
  checkpointId,
  handoffId: uuid,
  ...handoffBody.shape,
  /** The W3C traceparent of the agent that handed off, so the next agent's spans can link to it. */
  traceparent: z.string().optional(),
});
/** An agent taking over: `checkpointId` (the child) and `leaseId` are minted with the command, so a replay makes the same ones. */
export const acknowledgeHandoffCommand = command('handoff.ack', { handoffId: uuid, checkpointId, leaseId: uuid, ...successorBody.shape });

export const startRecoveryCommand = command('recovery.start', { taskId: externalId, recoveryId: uuid, reason: z.string(), failure: failureSchema });
export const completeRecoveryCommand = command('recovery.complete', { recoveryId: uuid, leaseId: uuid, ...successorBody.shape });
/** An admin's: the circuit breaker is closed again and the task may be recovered. */
export const unblockTaskCommand = command('task.unblock', { taskId: externalId, reason: z.string().optional() });
export const setTaskStateCommand = command('task.state', { taskId: externalId, ...taskStateBody.shape });
/** An admin's: the task's own retention policy; `null` clears a member (the tenant default applies again). */
export const setPolicyCommand = command('task.policy', {
  taskId: externalId,
  retention: z.string().nullable().optional(),
  expireAfter: z.string().nullable().optional(),
  keepLast: z.number().int().nullable().optional(),
});
/** An admin's: a legal hold placed (`reason`) or lifted. */
export const legalHoldCommand = command('task.hold', { taskId: externalId, hold: z.boolean(), reason: z.string().optional() });
/** Old checkpoints removed under `keepLast`, never what must stay (`service/retention.ts`). */
export const compactTaskCommand = command('task.compact', { taskId: externalId, keepLast: z.number().int().min(1), protect: z.array(z.string()) });

/** Removes every checkpoint of a task, over as many transactions as it takes; its head and audit chain stay, with a tombstone entry. */
export const purgeTaskCommand = command('task.purge', {
  taskId: externalId,
  /** Set by the retention sweeper: the expiry it found due. The purge starts only if the task is still due when it runs. */
  expiresAt: z.string().optional(),
});
/** The next batch of a purge in progress (the maintenance runner's, or the purging request's). */
export const purgePageCommand = command('task.purge_page', { taskId: externalId });

export type CreateCheckpoint = z.infer<typeof createCheckpointCommand>;
export type UpdateCheckpoint = z.infer<typeof updateCheckpointCommand>;
export type FinalizeCheckpoint = z.infer<typeof finalizeCheckpointCommand>;
export type LinkCheckpoints = z.infer<typeof linkCheckpointsCommand>;
export type RecordCorruption = z.infer<typeof recordCorruptionCommand>;
export type AcquireLease = z.infer<typeof acquireLeaseCommand>;
export type RenewLease = z.infer<typeof renewLeaseCommand>;
export type ReleaseLease = z.infer<typeof releaseLeaseCommand>;
export type ExpireLease = z.infer<typeof expireLeaseCommand>;
export type StartHandoff = z.infer<typeof startHandoffCommand>;
export type AcknowledgeHandoff = z.infer<typeof acknowledgeHandoffCommand>;
export type StartRecovery = z.infer<typeof startRecoveryCommand>;
export type CompleteRecovery = z.infer<typeof completeRecoveryCommand>;
export type UnblockTask = z.infer<typeof unblockTaskCommand>;
export type SetTaskState = z.infer<typeof setTaskStateCommand>;
export type PurgeTask = z.infer<typeof purgeTaskCommand>;
export type PurgePage = z.infer<typeof purgePageCommand>;
export type SetPolicy = z.infer<typeof setPolicyCommand>;
export type LegalHoldChange = z.infer<typeof legalHoldCommand>;
export type CompactTask = z.infer<typeof compactTaskCommand>;

/** An agent taking over a task: by acknowledging a handoff or completing a recovery. */
export type Successor = z.infer<typeof successorBody> & { leaseId: string };

export type CheckpointCommand = CreateCheckpoint | UpdateCheckpoint | FinalizeCheckpoint | LinkCheckpoints;

/** The writes the local queue accepts while the store is unavailable: an agent's own checkpoint writes and its handoff. */
export const queueableCommandSchema = z.discriminatedUnion('kind', [createCheckpointCommand, updateCheckpointCommand, finalizeCheckpointCommand, linkCheckpointsCommand, startHandoffCommand]);
export type QueueableCommand = z.infer<typeof queueableCommandSchema>;

/** The queue's: a replayed write that could no longer apply is kept, with why, on the dead-letter list. */
export const deadLetterCommand = command('queue.dead_letter', {
  /** The write's task, when known: the dead letter is audited on its chain. */
  taskId: externalId.optional(),
  /** The write as it was accepted. */
  write: queueableCommandSchema,
  enqueuedAt: z.string(),
  /** Why it could not apply: the problem the write would have been answered with. */
  error: z.object({ code: z.string(), status: z.number().int(), detail: z.string().optional() }),
});
export type DeadLetterWrite = z.infer<typeof deadLetterCommand>;

export type LeaseCommand = AcquireLease | RenewLease | ReleaseLease | ExpireLease;
export type ProtocolCommand = LeaseCommand | StartHandoff | AcknowledgeHandoff | StartRecovery | CompleteRecovery | UnblockTask | SetTaskState | PurgeTask | PurgePage | SetPolicy | LegalHoldChange | CompactTask;
export type Command = CheckpointCommand | RecordCorruption | ProtocolCommand | DeadLetterWrite;

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

/** A change to an existing checkpoint. */
export type ChangeCommand = Exclude<QueueableCommand, CreateCheckpoint>;

/** The rule of each change to an existing checkpoint: what it makes of the current version, or why not. */
export const CHANGE_RULES: { [K in ChangeCommand['kind']]: (current: Checkpoint, command: Extract<ChangeCommand, { kind: K }>) => Ruled } = {
  'checkpoint.update': (current, c) => mergePatch(current, c.patch),
  'checkpoint.finalize': (current, c) => finalize(current, c.status, c.at),
  'checkpoint.link': (current, c) => linkTo(current, c.parentId),
  'handoff.start': (current, c) => handoffFinal(current, { trigger: c.trigger, ...(c.contextUtilization !== undefined ? { contextUtilization: c.contextUtilization } : {}) }, c.at),
};

/** The next version `command` makes of `current`: still changeable, If-Match current, the kind's rule, one version on. */
export function applyChange(current: Checkpoint, command: ChangeCommand): Ruled {
  const blocked = changeable(current, 'ifMatch' in command ? command.ifMatch : undefined);
  if (blocked) return { ok: false, refusal: blocked };
  const rule = CHANGE_RULES[command.kind] as (current: Checkpoint, command: ChangeCommand) => Ruled;
  const ruled = rule(current, command);
  return ruled.ok ? { ok: true, next: nextVersion(current, ruled.next, command.at) } : ruled;
}

/** What a queueable `command` makes of `current` (undefined for a checkpoint the queue alone knows of): the same rules as the live write path. */
export function applyQueueable(current: Checkpoint | undefined, command: QueueableCommand): Ruled {
  if (command.kind === 'checkpoint.create') return { ok: true, next: buildCheckpoint(command.input, command.checkpointId, command.at) };
  if (current === undefined) return { ok: false, refusal: { code: 'validation_failed', errors: [{ field: 'checkpointId', message: 'is not known to the queue' }] } };
  return applyChange(current, command);
}
