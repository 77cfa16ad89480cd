/**
 * The fleet's bound on the full-text pending list. Over a store other
 * processes write too (FoundationDB), one instance holds the indexer duty
 * and merges every instance's creates; the others cannot tell from their
 * own creates how far behind it is. So every create adds one to its
 * tenant's count of pending entries and every merge takes away what it
 * cleared, in their own transactions (`repository/pending-terms.ts`,
 * `pendingCounts`), and each instance reads the counts of the tenants it
 * creates for, and the indexer duty's lease, every {@link POLL_MS}. While
 * a tenant's count is past the bound (`BATON_INDEXER_PENDING_BOUND`) and an
 * instance holds the duty, that tenant's creates wait for the count to fall
 * below it: the fleet creates no faster than its merge keeps up, and a
 * search never reads a list longer than about the bound.
 *
 * A wait never outlasts the merge: when no instance holds the duty (a fleet
 * all `BATON_INDEXER=off`, a holder whose lease ran out), when the counts
 * cannot be read, or when the tenant's count has not fallen for
 * {@link STALL_MS} while past the bound (a holder that stopped merging), its creates go on, and the
 * list grows as it did before the bound; searches stay complete and scan an
 * index past `PENDING_LIMIT` entries. Over LMDB one process holds the store
 * and its indexer bounds its own creates (`Indexer.admit`): there is no gate.
 *
 * @module
 */
import type { ServiceContext } from '../context.js';
import { getDutyLease, pendingCounts } from '../repository/repository.js';
import { runTransaction } from '../transactions.js';

/** How often the counts are read while creates come (ms): at 500 creates/s a fleet overshoots the bound by ~50 at most. */
export const POLL_MS = 100;
/** How long a tenant's count is read after its last create here (ms). */
const ACTIVE_MS = 5_000;
/** How long a tenant's creates wait without its count falling before they go on (ms): the merge has stopped, and waiting would not shorten the list. */
export const STALL_MS = 2_000;

export class PendingGate {
  /** Tenants created for here lately: when their last create came (ms). */
  private readonly active = new Map<string, number>();
  /** Each active tenant's count, as last read. */
  private readonly counts = new Map<string, number>();
  /** Whether an instance held the indexer duty at the last read. */
  private held = false;
  /**
   * Since when each tenant past its bound has been so without its count
   * falling (ms): past {@link STALL_MS} the gate opens for it, until the
   * count falls again.
   */
  private readonly pastSince = new Map<string, number>();
  /** Tenants whose creates go on past the bound for want of a merge (warned once, until the count falls). */
  private readonly stalled = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private waiters: Array<() => void> = [];
  private stopped = false;
  /** Whether the last read failed (logged once, when it starts). */
  private unread = false;

  constructor(
    private readonly ctx: ServiceContext,
    /** Entries a tenant's list may hold before its creates wait. */
    readonly bound: number,
    private readonly pollMs = POLL_MS,
    private readonly stallMs = STALL_MS,
  ) {}

  /**
   * Undefined when a create of `tenant` may go on now (nearly always); a
   * promise that resolves when it may, while its tenant's list is past the
   * bound and the duty's holder merges it.
   */
  admit(tenant: string): Promise<void> | undefined {
    const now = Date.now();
    this.active.set(tenant, now);
    this.schedule();
    return this.closed(tenant) ? this.wait(tenant) : undefined;
  }

  /** Stops reading the counts; creates waiting go on. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.release();
  }

  private closed(tenant: string): boolean {
    const count = this.counts.get(tenant) ?? 0;
    if (this.stopped || !this.held || count <= this.bound) return false;
    if (Date.now() - (this.pastSince.get(tenant) ?? Date.now()) < this.stallMs) return true;
    if (!this.stalled.has(tenant)) {
      this.stalled.add(tenant);
      this.ctx.log.warn({ tenant, pending: count, bound: this.bound, stallMs: this.stallMs }, 'creates go on past the full-text pending list\'s bound: the indexer duty\'s holder merged none of it while they waited');
    }
    return false;
  }

  private async wait(tenant: string): Promise<void> {
    this.ctx.metrics.indexerAdmissionWaits.inc();
    while (this.closed(tenant)) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private schedule(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => void this.read(), this.pollMs);
    this.timer.unref();
  }

  /** One read of the active tenants' counts and the duty's lease, then the waiters look again. */
  private async read(): Promise<void> {
    const now = Date.now();
    for (const [tenant, at] of this.active) {
      if (now - at <= ACTIVE_MS) continue;
      this.active.delete(tenant);
      this.counts.delete(tenant);
      this.pastSince.delete(tenant);
      this.stalled.delete(tenant);
    }
    const tenants = [...this.active.keys()];
    try {
      const [counts, lease] = await runTransaction(this.ctx, (tx) => Promise.all([pendingCounts(tx, tenants), getDutyLease(tx, 'indexer')]), { readOnly: true });
      // By the service's clock, as the duty's holder renews it (`fleet/duties.ts`).
      this.held = lease !== undefined && this.ctx.now().getTime() <= lease.until + this.ctx.clockSkewMs;
      let largest = 0;
      tenants.forEach((tenant, i) => {
        const count = counts[i]!;
        const before = this.counts.get(tenant);
        this.counts.set(tenant, count);
        largest = Math.max(largest, count);
        // Past the bound: since now if it just got there or the merge took some away, else since it got there.
        if (count <= this.bound || (before !== undefined && count < before)) this.stalled.delete(tenant);
        if (count <= this.bound) this.pastSince.delete(tenant);
        else if (before === undefined || count < before || !this.pastSince.has(tenant)) this.pastSince.set(tenant, Date.now());
      });
      this.ctx.metrics.indexerPending.set(largest);
      if (this.unread) this.ctx.log.info({}, 'the full-text pending counts are read again: creates wait on them once more');
      this.unread = false;
    } catch (error) {
      // Unread: the gate opens, and the creates meet the store's own answer.
      this.held = false;
      if (!this.unread) this.ctx.log.warn({ err: error }, 'the full-text pending counts could not be read: creates go on without waiting for the merge');
      this.unread = true;
    }
    this.timer = undefined;
    this.release();
    if (this.active.size > 0) this.schedule();
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
