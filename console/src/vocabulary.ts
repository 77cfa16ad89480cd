/**
 * The words of the API the console offers in its menus. They are copied
 * rather than imported because the service defines them beside its zod
 * schemas, which the page does not need; test/console/vocabulary.test.ts
 * holds the copies equal to the service's.
 *
 * @module
 */
export { EVENT_TYPES } from '../../src/domain/events.js';

export const PHASES = ['planning', 'implementing', 'testing', 'reviewing', 'complete', 'handoff'] as const;
export const STATUSES = ['active', 'finalized'] as const;
export const FINAL_STATUSES = ['completed', 'failed', 'handoff', 'abandoned'] as const;
