/**
 * What a client sends for each change besides the checkpoint itself: the
 * bodies of finalize, link, lease, handoff, acknowledgment, recovery and
 * task-state requests. Commands (`commands.ts`) are made of these; HTTP
 * validates its bodies with them and the OpenAPI document, MCP tools and
 * the CLI describe them from the same schemas.
 *
 * @module
 */
import { z } from 'zod';
import { checkpointId, codeVersion, externalId, FINAL_STATUSES } from './checkpoint.js';
import { HANDOFF_TRIGGERS } from './handoff.js';
import { LEASE_TTL_MS } from './leases.js';
import { FAILURE_KINDS } from './recovery.js';
import { SETTABLE_STATES } from './task-state.js';

const agentId = externalId;
export const leaseTtlMs = z.coerce.number().int().min(LEASE_TTL_MS.min).max(LEASE_TTL_MS.max);
const note = z.string().max(10_000);

export const finalizeBody = z.strictObject({
  status: z.enum(FINAL_STATUSES),
  signature: z.strictObject({ meaning: z.enum(['authorship', 'review', 'approval']) }).optional(),
});

export const linkBody = z.strictObject({ childId: checkpointId });

export const leaseBody = z.strictObject({ agentId, ttlMs: leaseTtlMs.default(LEASE_TTL_MS.default) });
export const renewBody = z.strictObject({ ttlMs: leaseTtlMs.optional() }).default({});

export const handoffBody = z.strictObject({
  trigger: z.enum(HANDOFF_TRIGGERS),
  toAgentType: externalId.optional(),
  toAgentId: externalId.optional(),
  contextUtilization: z.number().min(0).max(100).optional(),
  note: note.optional(),
});

/** An agent taking a task over: by acknowledging a handoff or completing a recovery. */
export const successorBody = z.strictObject({
  agentId,
  agentType: externalId.optional(),
  codeVersion: codeVersion.optional(),
  acceptCodeChange: z.boolean().optional(),
  ttlMs: leaseTtlMs.optional(),
});

export const failureSchema = z.strictObject({ kind: z.enum(FAILURE_KINDS), message: note.optional(), recoverable: z.boolean().optional() });

export const recoveryBody = z.strictObject({
  reason: z.string().min(1).max(2_000),
  failure: failureSchema,
});

export const unblockBody = z.strictObject({ reason: note.optional() }).default({});

export const taskStateBody = z.strictObject({ state: z.enum(SETTABLE_STATES), reason: note.optional() });
