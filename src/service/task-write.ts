/**
 * The one write path. Every change to a task goes through `writeTask`: in one
 * transaction it reads the task head (which serializes writes to one task and
 * leaves other tasks alone), checks the fencing token, applies the change,
 * appends its audit entries to the task's chain and its events to the outbox,
 * and records the operation id with the result so that a repeat applies once.
 *
 * @module
 */
import { AppError } from '../errors.js';
import { randomUUID } from 'node:crypto';
import { readRecord, tenantKeyspace, writeRecord } from '../store/keyspace.js';
import { applyOnce, OperationReusedError } from '../store/once.js';
import type { Transaction } from '../store/store.js';
import { appendAudit, GENESIS_HASH, type AuditDraft } from './audit.js';
import type { Actor, ServiceContext, WriteOptions } from './context.js';
import { appendEvents, type CloudEvent, type EventDraft } from './events.js';

export type Keyspace = ReturnType<typeof tenantKeyspace>;

export interface TaskHead {
  taskId: string;
  /** The newest checkpoint created in the task. */
  latestId?: string;
  /** How many checkpoints the task has had; the last history sequence. */
  seq: number;
  audit: { seq: number; hash: string };
  createdAt: string;
  updatedAt: string;
  /** The live lease, when one is held (leases build on this). */
  lease?: { id: string; agentId: string; epoch: number; expiresAt: string };
}

export interface TaskWrite {
  tx: Transaction;
  ks: Keyspace;
  head: TaskHead;
  now: string;
  actor: Actor;
  audit(draft: Omit<AuditDraft, 'at' | 'actor'> & { agentId?: string }): void;
  event(draft: EventDraft): void;
}

const keyspaces = new Map<string, Keyspace>();

/** The keyspace of a tenant; built once per tenant, since keys are packed on every request. */
export function keyspaceOf(tenant: string): Keyspace {
  let ks = keyspaces.get(tenant);
  if (ks === undefined) {
    ks = tenantKeyspace(tenant);
    keyspaces.set(tenant, ks);
  }
  return ks;
}

export async function readHead(tx: Transaction, ks: Keyspace, taskId: string): Promise<TaskHead | undefined> {
  return readRecord<TaskHead>(tx, ks.tasks, [taskId]);
}

/**
 * Runs `change` for task `taskId` inside one transaction, exactly once per
 * operation. Returns the change's result, or the recorded
 * result of the first request with the same Idempotency-Key.
 */
export async function writeTask<T>(
  ctx: ServiceContext,
  actor: Actor,
  options: WriteOptions & { action: string },
  taskId: string,
  change: (write: TaskWrite) => Promise<T>,
): Promise<{ result: T; replayed: boolean }> {
  const ks = keyspaceOf(actor.tenant);
  const now = ctx.now().toISOString();
  // Minted outside the body: a body that runs twice must record the same operation.
  const operationId = options.idempotencyKey !== undefined ? `key:${options.idempotencyKey}` : `op:${randomUUID()}`;
  const fingerprint = `${options.action}:${options.fingerprint ?? ''}`;

  const apply = async (tx: Transaction): Promise<T> => {
    const existing = await readHead(tx, ks, taskId);
    const head: TaskHead = existing ?? { taskId, seq: 0, audit: { seq: 0, hash: GENESIS_HASH }, createdAt: now, updatedAt: now };
    checkFencing(head, options.leaseEpoch, now);
    const drafts: AuditDraft[] = [];
    const events: CloudEvent[] = [];
    const result = await change({
      tx,
      ks,
      head,
      now,
      actor,
      audit: ({ agentId, ...draft }) =>
        drafts.push({ ...draft, at: now, actor: { subject: actor.subject, role: actor.role, ...(agentId ? { agentId } : {}) } }),
      event: (draft) =>
        events.push({
          specversion: '1.0',
          // A rerun body may mint other event ids: only the attempt that commits is ever seen.
          id: randomUUID(),
          source: ctx.eventSource,
          type: draft.type,
          time: now,
          subject: draft.subject,
          datacontenttype: 'application/json',
          data: { tenant: actor.tenant, taskId, ...draft.data },
        }),
    });
    head.audit = appendAudit(tx, ks.audit, taskId, head.audit, drafts);
    head.updatedAt = now;
    await writeRecord(tx, ks.tasks, [taskId], head);
    appendEvents(tx, ks.events, events);
    return result;
  };

  // Without an Idempotency-Key, an operation id is needed only where a store may run a committed body again.
  const recorded = options.idempotencyKey !== undefined || !ctx.store.commitOutcomeKnown;
  try {
    const outcome = recorded
      ? await ctx.store.transact((tx) =>
          applyOnce(tx, options.idempotencyKey !== undefined ? ks.idempotency : ks.operations, operationId, () => apply(tx), fingerprint),
        )
      : { result: await ctx.store.transact(apply), applied: true };
    ctx.notifier.notify(actor.tenant);
    return { result: outcome.result, replayed: !outcome.applied };
  } catch (error) {
    if (error instanceof OperationReusedError) throw new AppError('idempotency_key_reused');
    throw error;
  }
}

/**
 * The fencing check: while a task has a live lease, a write must carry its
 * epoch, and an older epoch is refused. Leases are granted by a later part of
 * the service; until a task has one, every write passes.
 */
function checkFencing(head: TaskHead, epoch: number | undefined, now: string): void {
  const lease = head.lease;
  if (lease === undefined || lease.expiresAt <= now) return;
  if (epoch !== undefined && epoch < lease.epoch) throw new AppError('lease_superseded', { extra: { currentEpoch: lease.epoch } });
}
