/**
 * One instance at a time does each background duty (DESIGN §10): a lease
 * in the store per duty names its holder and until when. The holder renews
 * it as it works; another instance takes it once it has lapsed by more than
 * the clocks may disagree (`BATON_CLOCK_SKEW_MS`), so a holder that died
 * hands it on within its time to live. A duty's steps still check in their
 * own transactions that they are due: the lease saves work, it does not
 * decide correctness.
 *
 * @module
 */
import type { ServiceContext } from '../context.js';
import { clearDutyLease, readDutyLease, writeDutyLease } from '../repository/duty-leases.js';
import { runTransaction } from '../transactions.js';

/** How long a duty's lease lasts without renewal. */
export const DUTY_TTL_MS = 15_000;

/** This instance's hold on one duty, checked before each pass of it. */
export class DutyHold {
  /** Until when this instance holds the duty, by its own clock; 0 when it does not. */
  private until = 0;

  constructor(
    private readonly ctx: ServiceContext,
    readonly duty: string,
    private readonly ttlMs = DUTY_TTL_MS,
  ) {}

  /** Whether this instance holds the duty for the pass about to run: renewed when half its time is gone, taken when lapsed. */
  async hold(): Promise<boolean> {
    const now = this.ctx.now().getTime();
    if (this.until - now > this.ttlMs / 2) return true;
    const me = this.ctx.instanceId ?? 'local';
    const expiresAt = new Date(now + this.ttlMs).toISOString();
    const held = await runTransaction(this.ctx, async (tx) => {
      const lease = await readDutyLease(tx, this.duty);
      const lapsed = lease === undefined || Date.parse(lease.expiresAt) + this.ctx.clockSkewMs < now;
      if (lease !== undefined && lease.holder !== me && !lapsed) return false;
      writeDutyLease(tx, { duty: this.duty, holder: me, expiresAt });
      return true;
    });
    this.until = held ? now + this.ttlMs : 0;
    return held;
  }

  /** Hands the duty back at shutdown, so another instance takes it at once. */
  async release(): Promise<void> {
    if (this.until === 0) return;
    this.until = 0;
    const me = this.ctx.instanceId ?? 'local';
    await runTransaction(this.ctx, async (tx) => {
      const lease = await readDutyLease(tx, this.duty);
      if (lease?.holder === me) clearDutyLease(tx, this.duty);
    });
  }
}
