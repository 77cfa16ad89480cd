/**
 * What wakes live event streams (DESIGN §7, §10). A commit in this process
 * wakes its tenant's streams at once. Where other processes write the same
 * store (FoundationDB), every transaction that writes events also adds one
 * to its tenant's event clock (`OutboxRows.tick`), and each instance keeps
 * one store watch per tenant with open streams: when another instance's
 * commit moves the clock, the watch fires, is armed again, and wakes the
 * tenant's streams here, which then read what is new after their own
 * cursors. Nothing polls: an idle stream costs the store nothing, and a
 * thousand idle streams of one tenant cost one armed watch.
 *
 * Nothing is missed between a wake and the next watch: a watch is armed by
 * reading the clock, and the streams are woken only after that read, when
 * the clock differs from the one the last watch was armed on. A commit
 * before the read is in the clock the streams were woken for; a commit after
 * it fires the watch. The first watch of a tenant wakes its streams once,
 * whatever the clock says. A watch the store refuses or ends (an outage, too
 * many watches) is armed again after a pause that doubles up to
 * {@link MAX_PAUSE_MS}, and each try wakes the streams, which then read as a
 * poll would until the watch holds.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Store, StoreWatch } from '../../store/store.js';
import type { CommitNotifier, ServiceLogger } from '../context.js';
import { keyspaceOf } from '../repository/keyspace.js';
import { clockKey } from '../repository/outbox.js';

/** The longest pause before a refused or ended watch is armed again. */
const MAX_PAUSE_MS = 5_000;
const FIRST_PAUSE_MS = 50;

/** The streams of one tenant in this process, and its watch while it has any. */
class TenantFeed {
  readonly listeners = new Set<() => void>();
  stopped = false;
  private watch: StoreWatch | undefined;

  constructor(
    private readonly tenant: string,
    private readonly log: ServiceLogger,
  ) {}

  wake(): void {
    for (const listener of [...this.listeners]) listener();
  }

  stop(): void {
    this.stopped = true;
    this.watch?.cancel();
  }

  /** Arms the tenant's watch again after each firing, until {@link stop}. */
  async run(arm: (key: Buffer) => Promise<StoreWatch>): Promise<void> {
    const key = clockKey(keyspaceOf(this.tenant));
    /** The clock the last watch was armed on; `null` before the first. */
    let last: Buffer | undefined | null = null;
    let pause = 0;
    while (!this.stopped) {
      let watch: StoreWatch;
      try {
        watch = await arm(key);
      } catch (error) {
        pause = Math.min(MAX_PAUSE_MS, Math.max(FIRST_PAUSE_MS, pause * 2));
        if (pause === MAX_PAUSE_MS) this.log.warn({ err: error, tenant: this.tenant }, 'event streams: the store refused a watch; the streams read at each retry until it holds');
        // The streams read now, as a poll would, while no watch tells them of other instances' commits.
        this.wake();
        await sleep(pause);
        continue;
      }
      if (this.stopped) {
        watch.cancel();
        break;
      }
      this.watch = watch;
      if (last === null || !sameClock(last, watch.value)) this.wake();
      last = watch.value;
      const fired = await watch.changed.catch(() => false);
      this.watch = undefined;
      if (fired) {
        pause = 0;
      } else if (!this.stopped) {
        // Ended without a change (the store's doing): not a hot loop of re-arming.
        pause = Math.min(MAX_PAUSE_MS, Math.max(FIRST_PAUSE_MS, pause * 2));
        await sleep(pause);
      }
    }
  }
}

function sameClock(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.equals(b);
}

/** Wakes live event streams: after this process's commits, and through the store's watches after other instances'. */
export class EventNotifier implements CommitNotifier {
  private readonly feeds = new Map<string, TenantFeed>();

  constructor(
    private readonly store: Store | undefined = undefined,
    private readonly log: ServiceLogger = { info: () => undefined, warn: () => undefined, error: () => undefined },
  ) {}

  notify(tenant: string): void {
    this.feeds.get(tenant)?.wake();
  }

  subscribe(tenant: string, listener: () => void): () => void {
    let feed = this.feeds.get(tenant);
    if (feed === undefined) {
      feed = this.open(tenant);
      this.feeds.set(tenant, feed);
    }
    feed.listeners.add(listener);
    const mine = feed;
    return () => {
      mine.listeners.delete(listener);
      if (mine.listeners.size === 0 && this.feeds.get(tenant) === mine) {
        mine.stop();
        this.feeds.delete(tenant);
      }
    };
  }

  private open(tenant: string): TenantFeed {
    const feed = new TenantFeed(tenant, this.log);
    // A store without watches is held by this process alone (LMDB): its commits are all this process's, and notify() sees them.
    const store = this.store;
    if (store?.watch !== undefined) {
      void feed.run(store.watch.bind(store)).catch((error: unknown) => this.log.error({ err: error, tenant }, 'event streams: the watch loop stopped'));
    }
    return feed;
  }
}
