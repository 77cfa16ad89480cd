/**
 * Keeping and letting go (DESIGN §3, §4): a task's policy — `retention`
 * (kept at least this long after its last write: no purge, no compaction),
 * `expireAfter` (purged this long after its last write; at least the
 * retention), `keepLast` (compaction keeps this many newest checkpoints) —
 * and its legal hold, under which nothing of it goes. A checkpoint's own
 * `compliance.retentionPolicy` and `compliance.legalHold` still apply to it.
 *
 * @module
 */
import { z } from 'zod';
import { isoDuration, type Checkpoint } from './checkpoint.js';

export const policyBody = z
  .strictObject({
    retention: isoDuration.nullable().optional().describe('Kept at least this long after the task’s last write (ISO 8601 duration); null clears it.'),
    expireAfter: isoDuration.nullable().optional().describe('Purged automatically this long after the task’s last write (at least the retention); null clears it.'),
    keepLast: z.number().int().min(1).max(1_000_000).nullable().optional().describe('Compaction keeps this many newest checkpoints; null clears it.'),
  })
  .refine((body) => !(typeof body.retention === 'string' && typeof body.expireAfter === 'string') || durationMs(body.expireAfter) >= durationMs(body.retention), {
    message: 'expireAfter must be at least retention: a task cannot expire while it must be kept',
    path: ['expireAfter'],
  });

export const holdBody = z.strictObject({ reason: z.string().min(1).max(2_000) });
export const compactBody = z.strictObject({
  keepLast: z.number().int().min(1).max(1_000_000).optional(),
  dryRun: z.boolean().optional(),
});

/** A task's own policy, as stored with its head; absent members fall back to the tenant's defaults. */
export interface TaskPolicy {
  retention?: string;
  expireAfter?: string;
  keepLast?: number;
}

export interface LegalHold {
  reason: string;
  at: string;
  by: string;
}

/** `start` plus an ISO 8601 duration (calendar years and months as the calendar counts them), in ms since the epoch. */
export function addDuration(start: string, duration: string): number {
  const match = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(duration);
  // The schema admitted only well-formed durations; anything else keeps the data, the safe side.
  if (match === null) return Number.POSITIVE_INFINITY;
  const [, y, mo, w, d, h, mi, s] = match.map((part) => Number(part ?? 0));
  const at = new Date(start);
  at.setUTCFullYear(at.getUTCFullYear() + y!, at.getUTCMonth() + mo!);
  return at.getTime() + ((w! * 7 + d!) * 86_400 + h! * 3600 + mi! * 60 + s!) * 1000;
}

/** A duration's length from the epoch: to compare two durations. */
function durationMs(duration: string): number {
  return addDuration('1970-01-01T00:00:00.000Z', duration);
}

/** The policy in force: the task's own members over the tenant's defaults. */
export function effectivePolicy(own: TaskPolicy | undefined, defaults: TaskPolicy): TaskPolicy {
  return { ...defaults, ...own };
}

/** Whether a legal hold or an unexpired retention period of the checkpoint itself applies at `now`. */
export function checkpointRetained(checkpoint: Checkpoint, now: string): boolean {
  const { legalHold, retentionPolicy } = checkpoint.compliance;
  if (legalHold === true) return true;
  if (retentionPolicy === undefined) return false;
  return addDuration(checkpoint.createdAt, retentionPolicy) > Date.parse(now);
}

/** Whether the task's retention, counted from its last write, still applies at `now`. */
export function taskRetained(policy: TaskPolicy, lastWrite: string, now: string): boolean {
  return policy.retention !== undefined && addDuration(lastWrite, policy.retention) > Date.parse(now);
}
