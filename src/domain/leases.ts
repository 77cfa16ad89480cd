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

/**
 * Whether `lease` still holds at `now`. `graceMs` is the clock-skew
 * allowance (`BATON_CLOCK_SKEW_MS`) for what would take the lease from its
 * holder (another agent's acquisition, the sweeper's expiry): instances'
 * clocks disagree, so those wait until that long after its expiry. The
 * holder's own epoch stops writing at the expiry itself (`fencing`), so
 * between the two nobody writes with the lease: the safe side of each clock.
 */
export function isLive(lease: Lease | undefined, now: string, graceMs = 0): lease is Lease {
  return lease !== undefined && lease.status === 'active' && lease.expiresAt > shifted(now, graceMs);
}

/** `now` moved back by `graceMs`: a lease held past it is held at `now` with the allowance. */
function shifted(now: string, graceMs: number): string {
  return graceMs === 0 ? now : new Date(Date.parse(now) - graceMs).toISOString();
}

export function expiresAt(now: string, ttlMs: number): string {
  return new Date(Date.parse(now) + ttlMs).toISOString();
}

export type FencingRefusal =
  | { code: 'lease_required'; epoch: number }
  | { code: 'lease_superseded'; epoch: number }
  | { code: 'lease_epoch_unknown'; epoch: number };

/**
 * The task's epoch at `now`. A lease that ran out unrenewed has outdated its
 * holder's epoch at its expiry, whether or not the sweeper has recorded the
 * expiry yet: the epoch is then the one the sweep sets (one above it).
 */
export function currentEpoch(state: LeaseState, now: string, graceMs = 0): number {
  const { lease } = state;
  if (lease === undefined || lease.status !== 'active' || lease.expiresAt > shifted(now, graceMs)) return state.epoch;
  return Math.max(state.epoch, lease.epoch + 1);
}

/**
 * Whether a write carrying `epoch` (absent when the writer sent none) may
 * change the task at `now`, the write's own time: an epoch older than the
 * task's current one is refused whether or not a lease is live, an expired
 * holder's included; while a lease is live, a write must carry its epoch.
 * Tasks without a live lease accept a write without an epoch.
 */
export function fencing(state: LeaseState, epoch: number | undefined, now: string, graceMs = 0): FencingRefusal | undefined {
  const current = currentEpoch(state, now, graceMs);
  if (epoch !== undefined && epoch < current) return { code: 'lease_superseded', epoch: current };
  if (epoch !== undefined && epoch > current) return { code: 'lease_epoch_unknown', epoch: current };
  if (epoch === undefined && isLive(state.lease, now, graceMs)) return { code: 'lease_required', epoch: current };
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
