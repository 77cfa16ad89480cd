/**
 * The lease sweeper: expired leases ended and announced (`LEASE_EXPIRED`,
 * the orchestrator's crash signal), each by a `lease.expire` command through
 * `execute`, like any write.
 *
 * @module
 */
import type { ServiceContext } from './context.js';
import { execute } from './execute.js';
import { dueLeases, type DueLease } from './repository/repository.js';
import { runTransaction } from './transactions.js';

/** How many due leases one sweep ends; the rest wait for the next sweep. */
const SWEEP_BATCH = 100;

/**
 * Looks for expired leases every `intervalMs` and ends them. Every instance
 * may sweep: ending a lease is a task transaction that checks it is still
 * due, so each expiry is announced once.
 */
export function startLeaseSweeper(ctx: ServiceContext, intervalMs: number): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let stopped = false;
  let failing = false;
  const sweep = async (): Promise<void> => {
    const now = ctx.now().toISOString();
    const due = await runTransaction(ctx, (tx) => dueLeases(tx, now, SWEEP_BATCH), { readOnly: true });
    for (const entry of due) {
      if (stopped) return;
      await expireOne(ctx, entry, now);
    }
  };
  const timer = setInterval(() => {
    // A sweep slower than the interval is not stacked on: the next tick finds it running and passes.
    if (running !== undefined) return;
    running = sweep()
      .then(() => {
        failing = false;
      })
      .catch((error: unknown) => {
        // Once per outage, not once a second through it.
        if (!failing) ctx.log.warn({ err: error }, 'lease sweep failed; retrying at each sweep until the store answers');
        failing = true;
      })
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  // The sweeper alone must not keep a process alive.
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
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
