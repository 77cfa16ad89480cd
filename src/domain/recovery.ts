/**
 * Recovery after a failure: the attempt record, and the circuit breaker that
 * blocks a task failing over and over instead of letting it loop.
 *
 * @module
 */

export const FAILURE_KINDS = ['timeout', 'error', 'crash'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export interface Failure {
  kind: FailureKind;
  message?: string;
  /** False when the orchestrator knows another attempt cannot help: the task is blocked at once. */
  recoverable?: boolean;
}

export interface Recovery {
  id: string;
  taskId: string;
  status: 'initiated' | 'blocked' | 'completed';
  /** The recovery point: the newest checkpoint that verifies. */
  checkpointId?: string;
  reason: string;
  failure: Failure;
  createdAt: string;
  /**
   * Why the attempt was blocked instead of initiated: `no_verified_checkpoint`
   * when every checkpoint was looked at and none verifies, `walk_limit_reached`
   * when the walk gave up before it looked at them all.
   */
  blockedReason?: 'circuit_open' | 'unrecoverable' | 'no_verified_checkpoint' | 'walk_limit_reached' | 'task_blocked';
  completedAt?: string;
  agentId?: string;
  leaseId?: string;
}

export interface BreakerSettings {
  /** Attempts allowed within the window; one more blocks the task. */
  attempts: number;
  windowMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = { attempts: 3, windowMs: 60 * 60 * 1000 };

/** The attempts still inside the window at `now`, and whether one more would trip the breaker. */
export function breaker(attempts: readonly string[], now: string, settings: BreakerSettings): { recent: string[]; open: boolean } {
  const since = Date.parse(now) - settings.windowMs;
  const recent = attempts.filter((at) => Date.parse(at) > since);
  return { recent, open: recent.length >= settings.attempts };
}
