/**
 * The lease sweeper: expired leases ended and announced (`LEASE_EXPIRED`,
 * the orchestrator's crash signal), each by a `lease.expire` command through
 * `execute`, like any write.
 *
 * @module
 */
import type { ServiceContext } from './context.js';
import { execute } from './execute.js';
import type { Periodic } from './maintenance/periodic.js';
import { dutyPeriodic } from './fleet/duties.js';
import { dueLeases, type DueLease } from './repository/repository.js';
import { runTransaction } from './transactions.js';

/** How many due leases one sweep ends; the rest wait for the next sweep. */
const SWEEP_BATCH = 100;

/**
 * Looks for expired leases every `intervalMs` and ends them: one instance of
 * a fleet at a time (`fleet/duties.ts`), and should two sweep at once,
 * ending a lease is a task transaction that checks it is still due, so each
 * expiry is announced once.
 */
export function startLeaseSweeper(ctx: ServiceContext, intervalMs: number): Periodic {
  return dutyPeriodic(ctx, 'lease-sweep', intervalMs, async (state) => {
    const now = ctx.now().toISOString();
    // A lease is due only once the clock-skew allowance after its expiry has passed (`expireLease` checks it again).
    const dueBy = new Date(Date.parse(now) - ctx.clockSkewMs).toISOString();
    const due = await runTransaction(ctx, (tx) => dueLeases(tx, dueBy, SWEEP_BATCH), { readOnly: true });
    for (const entry of due) {
      if (state.stopped) return;
      await expireOne(ctx, entry, now);
    }
  });
}

async function expireOne(ctx: ServiceContext, entry: DueLease, now: string): Promise<void> {
  const { expired } = await execute(ctx, {
    kind: 'lease.expire',
    operationId: `op:${entry.leaseId}:expire:${entry.expiresAt}`,
    fingerprint: '',
    actor: { tenant: entry.tenant, role: 'admin', subject: 'baton:lease-sweeper' },
    at: now,
    taskId: entry.taskId,
    leaseId: entry.leaseId,
    expiresAt: entry.expiresAt,
  });
  if (expired) ctx.log.info({ tenant: entry.tenant, taskId: entry.taskId, leaseId: entry.leaseId }, 'lease expired');
}
