/**
 * The one way a write's command is begun, whoever sends it (a route, an MCP
 * tool, the CLI through either): the operation id minted before any
 * transaction, the client's Idempotency-Key as an explicit field, who asks,
 * the time the change records, and the fencing token. The caller adds the
 * kind and the kind's own fields.
 *
 * @module
 */
import type { Actor, CommandBase } from '../domain/commands.js';
import { newId } from '../domain/ids.js';
import type { ServiceContext } from './context.js';

export interface CommandOrigin {
  actor: Actor;
  /** The client's Idempotency-Key and a digest of its request: a retry gets the first answer, the same key with another request is refused. */
  idempotency?: { key: string; fingerprint: string };
  /** The fencing token the writer sent (`Baton-Lease-Epoch`). */
  leaseEpoch?: number;
}

/** The operation id of a client's Idempotency-Key: the space of client keys, apart from ids the service mints. */
export function clientOperationId(key: string): string {
  return `key:${key}`;
}

export function commandBase(ctx: Pick<ServiceContext, 'now'>, origin: CommandOrigin): CommandBase {
  const { idempotency } = origin;
  return {
    // Minted here, before any transaction: a body that runs twice must record the same operation. A
    // UUIDv7, so the records a service writes come in time order: each lands beside the last one on the
    // same B-tree leaf, not on a random leaf of its own (two pages of every create's commit).
    operationId: idempotency ? clientOperationId(idempotency.key) : `op:${newId()}`,
    ...(idempotency ? { idempotency: 'client' as const } : {}),
    fingerprint: idempotency?.fingerprint ?? '',
    actor: origin.actor,
    at: ctx.now().toISOString(),
    ...(origin.leaseEpoch !== undefined ? { leaseEpoch: origin.leaseEpoch } : {}),
  };
}
