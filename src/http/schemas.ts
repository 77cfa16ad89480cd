/**
 * The HTTP shapes of requests (params and query strings), so that the
 * OpenAPI document and validation come from the same zod definitions. The
 * bodies of changes are the commands' own (`domain/requests.ts`).
 *
 * @module
 */
import { z } from 'zod';
import { checkpointId, externalId, FINAL_STATUSES, PHASES, STATUSES } from '../domain/checkpoint.js';
import { EXPORT_FORMAT_NAMES, IMPORT_FORMAT_NAMES } from '../formats/format.js';
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

export const eventsQuery = z.object({
  after: z.string().max(100).optional(),
  types: z.string().max(2000).optional(),
  limit: limit(1000, 100),
});

export const leaseParams = z.object({ id: z.uuid({ message: 'must be a UUID' }) });

export const importQuery = z.object({
  format: z.enum(IMPORT_FORMAT_NAMES),
  /** The task, for formats whose documents carry none (a pipeline's storyId is its task). */
  taskId: externalId.optional(),
  /** The writing agent, for documents that name none. */
  agentId: externalId.optional(),
});

export const exportQuery = z.object({ format: z.enum(EXPORT_FORMAT_NAMES) });
