/**
 * The settings that remove data, held in the store so that every instance
 * over it decides alike what to delete (DESIGN §10): the tenant defaults
 * under each task's own policy (`retention`, `expireAfter`, `keepLast`),
 * how long events stay in the outbox and how long operation records are
 * kept. An instance's environment only seeds a store that holds none; after
 * that they change through `PUT /v1/admin/settings`.
 *
 * @module
 */
import { z } from 'zod';
import { isoDuration } from './checkpoint.js';
import type { TaskPolicy } from './retention.js';

export interface FleetSettings {
  /** The defaults under each task's own policy. */
  defaults: TaskPolicy;
  /** How long events stay in the outbox (ms). */
  eventRetentionMs: number;
  /** How long operation records (Idempotency-Keys) are kept (ms). */
  operationRetentionMs: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A change to the settings: members left out stay as they are; `null` clears a default. */
export const fleetSettingsBody = z.strictObject({
  retention: isoDuration.nullable().optional().describe('Default retention of tasks without their own (ISO 8601 duration); null clears it.'),
  expireAfter: isoDuration.nullable().optional().describe('Default expireAfter of tasks without their own; null clears it.'),
  keepLast: z.number().int().min(1).max(1_000_000).nullable().optional().describe('Default keepLast of tasks without their own; null clears it.'),
  eventRetentionMs: z.number().int().min(1_000).max(10 * 365 * DAY_MS).optional().describe('How long events stay in the outbox (ms).'),
  operationRetentionMs: z.number().int().min(60_000).max(365 * DAY_MS).optional().describe('How long operation records are kept (ms).'),
});
export type FleetSettingsChange = z.infer<typeof fleetSettingsBody>;

/** `settings` with `change` applied. */
export function changeSettings(settings: FleetSettings, change: FleetSettingsChange): FleetSettings {
  const defaults: TaskPolicy = { ...settings.defaults };
  for (const name of ['retention', 'expireAfter', 'keepLast'] as const) {
    const value = change[name];
    if (value === null) delete defaults[name];
    else if (value !== undefined) (defaults as Record<string, unknown>)[name] = value;
  }
  return {
    defaults,
    eventRetentionMs: change.eventRetentionMs ?? settings.eventRetentionMs,
    operationRetentionMs: change.operationRetentionMs ?? settings.operationRetentionMs,
  };
}
