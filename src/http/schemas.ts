/**
 * Request schemas shared by routes (params, query strings, bodies), so that
 * the OpenAPI document and validation come from the same zod definitions.
 *
 * @module
 */
import { z } from 'zod';
import { checkpointId, externalId, FINAL_STATUSES, PHASES, STATUSES } from '../domain/checkpoint.js';

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
    q: z.string().min(1).max(500).optional(),
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
