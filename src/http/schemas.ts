/**
 * Request schemas shared by routes (params, query strings, bodies), so that
 * the OpenAPI document and validation come from the same zod definitions.
 *
 * @module
 */
import { z } from 'zod';
import { checkpointId, codeVersion, externalId, FINAL_STATUSES, PHASES, STATUSES } from '../domain/checkpoint.js';
import { HANDOFF_TRIGGERS } from '../domain/handoff.js';
import { EXPORT_FORMAT_NAMES, IMPORT_FORMAT_NAMES } from '../formats/format.js';
import { LEASE_TTL_MS } from '../domain/leases.js';
import { FAILURE_KINDS } from '../domain/recovery.js';
import { SETTABLE_STATES } from '../domain/task-state.js';
import { NO_QUERY_TERMS, queryTerms } from '../domain/terms.js';

export const idParams = z.object({ id: checkpointId });
export const taskParams = z.object({ taskId: externalId });

const limit = (max: number, fallback: number) => z.coerce.number().int().min(1).max(max).default(fallback);
const dateTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });

export const pageQuery = z.object({ limit: limit(1000, 100), cursor: z.string().max(2000).optional() });

export const versionQuery = z.object({ version: z.coerce.number().int().min(1).optional() });

export const searchQuery = z
  .looseObject({
    taskId: externalId.optional(),
    agentId: externalId.optional(),
    agentType: externalId.optional(),
    phase: z.enum(PHASES).optional(),
    status: z.enum(STATUSES).optional(),
    finalStatus: z.enum(FINAL_STATUSES).optional(),
    file: z.string().min(1).max(4096).optional(),
    from: dateTime.optional(),
    to: dateTime.optional(),
    q: z
      .string()
      .min(1)
      .max(500)
      .refine((q) => queryTerms(q).length > 0, NO_QUERY_TERMS)
      .optional()
      .describe(
        'Full text: whole words, case-insensitive; every word must appear in the item texts, decisions, assumptions, constraints, dependencies or current focus. Stop words (the, and, of, …) and one-character words are ignored; a q with no other word is 400.',
      ),
    limit: limit(1000, 50),
    cursor: z.string().max(2000).optional(),
  })
  .describe('Filters combine with AND; label.NAME=VALUE filters by a label.');

export const finalizeBody = z.strictObject({
  status: z.enum(FINAL_STATUSES),
  signature: z.strictObject({ meaning: z.enum(['authorship', 'review', 'approval']) }).optional(),
});

export const linkBody = z.strictObject({ childId: checkpointId });

export const eventsQuery = z.object({
  after: z.string().max(100).optional(),
  types: z.string().max(2000).optional(),
  limit: limit(1000, 100),
});

const agentId = externalId;
const ttlMs = z.coerce.number().int().min(LEASE_TTL_MS.min).max(LEASE_TTL_MS.max);
const note = z.string().max(10_000);

export const leaseParams = z.object({ id: z.uuid({ message: 'must be a UUID' }) });

export const leaseBody = z.strictObject({ agentId, ttlMs: ttlMs.default(LEASE_TTL_MS.default) });
export const renewBody = z.strictObject({ ttlMs: ttlMs.optional() }).default({});

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
  ttlMs: ttlMs.optional(),
});

export const recoveryBody = z.strictObject({
  reason: z.string().min(1).max(2_000),
  failure: z.strictObject({ kind: z.enum(FAILURE_KINDS), message: note.optional(), recoverable: z.boolean().optional() }),
});

export const unblockBody = z.strictObject({ reason: note.optional() }).default({});

export const taskStateBody = z.strictObject({ state: z.enum(SETTABLE_STATES), reason: note.optional() });

export const importQuery = z.object({
  format: z.enum(IMPORT_FORMAT_NAMES),
  /** The task, for formats whose documents carry none (a pipeline's storyId is its task). */
  taskId: externalId.optional(),
  /** The writing agent, for documents that name none. */
  agentId: externalId.optional(),
});

export const exportQuery = z.object({ format: z.enum(EXPORT_FORMAT_NAMES) });
