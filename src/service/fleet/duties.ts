/**
 * The fleet's maintenance duties (DESIGN §10): the lease sweep, the
 * operation sweep and the maintenance runner (expiry purges, compactions,
 * event trimming) are each done by one instance at a time. Over a store that
 * other processes write too (FoundationDB), each duty has a lease in the
 * store (`repository/duty-leases.ts`): before a run, an instance that holds
 * the lease renews it once half its time has gone, one that does not takes
 * it only when the lease has run out by more than the clock-skew allowance,
 * and otherwise skips the run. When the holder dies, another instance takes
 * the duty over within the lease's time (`BATON_DUTY_TTL_MS`) plus the skew
 * and one interval; a holder that stops cleanly gives the lease up, so the
 * next instance takes over at its next tick.
 *
 * The lease saves work; it does not decide correctness. Each step of a duty
 * still re-checks in its own transaction that it is due and carries an id
 * that is the same on every instance, so two holders for a moment (a lease
 * that ran out during a long run, clocks further apart than allowed) still
 * do each step once. Over LMDB one process holds the store, so there is no
 * lease to take: the duty is always this instance's.
 *
 * @module
 */
import type { ServiceContext } from '../context.js';
import { periodic, type Periodic } from '../maintenance/periodic.js';
import { clearDutyLease, getDutyLease, putDutyLease } from '../repository/repository.js';
import { runTransaction } from '../transactions.js';

export type DutyName = 'lease-sweep' | 'operation-sweep' | 'maintenance' | 'indexer';

/**
 * Runs `work` every `intervalMs`, as {@link periodic} does, on the runs when
 * this instance holds `duty`: always where no other process writes the
 * store, and over a shared store while it holds the duty's lease.
 */
export function dutyPeriodic(ctx: ServiceContext, duty: DutyName, intervalMs: number, work: (state: { readonly stopped: boolean }) => Promise<void>): Periodic {
  // The instance that takes the duty's lease; none over a store only this process writes (or with no instance to
  // hold it for), where nobody else could do the duty.
  const me = ctx.store.watch === undefined ? undefined : ctx.duties?.instanceId;
  const leased = me !== undefined;
  const ttlMs = Math.max(ctx.duties?.ttlMs ?? 0, 3 * intervalMs);
  const held = { until: 0 };
  const holds = async (): Promise<boolean> => {
    if (me === undefined) return true;
    const now = ctx.now().getTime();
    if (now < held.until - ttlMs / 2) return true;
    const { mine, from } = await runTransaction(ctx, async (tx) => {
      const lease = await getDutyLease(tx, duty);
      const ours = lease?.holder === me;
      if (lease !== undefined && !ours && now <= lease.until + ctx.clockSkewMs) return { mine: false, from: lease.holder };
      putDutyLease(tx, { duty, holder: me, until: now + ttlMs, since: ours ? lease.since : new Date(now).toISOString() });
      return { mine: true, from: lease?.holder };
    });
    if (mine && from !== me) ctx.log.info({ duty, from: from ?? null }, 'maintenance duty taken by this instance');
    held.until = mine ? now + ttlMs : 0;
    return mine;
  };
  const runs = periodic(duty, intervalMs, ctx.log, async (state) => {
    let mine: boolean;
    try {
      mine = await holds();
    } finally {
      ctx.metrics.dutyHeld.set({ duty }, !leased || held.until > 0 ? 1 : 0);
    }
    if (!mine) return;
    ctx.metrics.dutyRuns.inc({ duty });
    await work(state);
  });
  return {
    kick: runs.kick,
    get stopped() {
      return runs.stopped;
    },
    async stop() {
      await runs.stop();
      if (!leased || held.until === 0) return;
      held.until = 0;
      ctx.metrics.dutyHeld.set({ duty }, 0);
      // Given up for the next instance to take at its next tick; if this fails, the lease runs out by itself.
      await runTransaction(ctx, async (tx) => {
        if ((await getDutyLease(tx, duty))?.holder === me) clearDutyLease(tx, duty);
      }).catch((error: unknown) => ctx.log.warn({ err: error, duty }, 'a maintenance duty was not given up at the stop; it passes to another instance when its lease runs out'));
    },
  };
}
