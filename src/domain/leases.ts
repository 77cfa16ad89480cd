/**
 * Leases and fencing. A lease makes one agent the task's writer until it
 * expires; every lease a task grants has a higher epoch than the last, and a
 * write that carries an older epoch than the task's newest is refused, so an
 * agent presumed dead cannot overwrite its successor's work.
 *
 * @module
 */

export type LeaseStatus = 'active' | 'released' | 'expired' | 'superseded' | 'revoked';

export interface Lease {
  id: string;
  taskId: string;
  agentId: string;
  epoch: number;
  ttlMs: number;
  acquiredAt: string;
  expiresAt: string;
  status: LeaseStatus;
  /** When it stopped being active, for every status but `active`. */
  endedAt?: string;
}

/** The shortest and longest lease a client may ask for, in milliseconds. */
export const LEASE_TTL_MS = { min: 100, max: 24 * 60 * 60 * 1000, default: 60_000 } as const;

/** What a task remembers about leases: the newest epoch it granted or fenced, and the live lease. */
export interface LeaseState {
  epoch: number;
  lease?: Lease;
}

export function isLive(lease: Lease | undefined, now: string): lease is Lease {
  return lease !== undefined && lease.status === 'active' && lease.expiresAt > now;
}

export function expiresAt(now: string, ttlMs: number): string {
  return new Date(Date.parse(now) + ttlMs).toISOString();
}

export type FencingRefusal =
  | { code: 'lease_required'; epoch: number }
  | { code: 'lease_superseded'; epoch: number }
  | { code: 'lease_epoch_unknown'; epoch: number };

/**
 * Whether a write carrying `epoch` (absent when the writer sent none) may
 * change the task now: an epoch older than the task's newest is refused
 * whether or not a lease is live; while a lease is live, a write must carry
 * its epoch. Tasks that never had a lease accept every write.
 */
export function fencing(state: LeaseState, epoch: number | undefined, now: string): FencingRefusal | undefined {
  if (epoch !== undefined && epoch < state.epoch) return { code: 'lease_superseded', epoch: state.epoch };
  if (epoch !== undefined && epoch > state.epoch) return { code: 'lease_epoch_unknown', epoch: state.epoch };
  if (epoch === undefined && isLive(state.lease, now)) return { code: 'lease_required', epoch: state.epoch };
  return undefined;
}

/** A new lease for `agentId`, one epoch above every earlier one. */
export function grant(state: LeaseState, id: string, taskId: string, agentId: string, ttlMs: number, now: string): Lease {
  return { id, taskId, agentId, epoch: state.epoch + 1, ttlMs, acquiredAt: now, expiresAt: expiresAt(now, ttlMs), status: 'active' };
}

/** The lease ended with `status` at `now`. */
export function ended(lease: Lease, status: Exclude<LeaseStatus, 'active'>, now: string): Lease {
  return { ...lease, status, endedAt: now };
}
