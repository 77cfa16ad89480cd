/**
 * `baton rekey` (`POST /v1/admin/rekey`): one pass over every tenant that
 * re-seals each stored value with the tenant's newest key, in bounded
 * transactions while the service runs, its progress readable at any time
 * (`GET /v1/admin/rekey`). When the pass is done and no queued write is left
 * under an older key, the keys nothing is sealed with any more are
 * forgotten, and their lines may leave the key file. A pass cut short by a
 * restart is simply run again: values already under the newest key are
 * skipped. Its last step compacts the store's files (`Store.compact`): the
 * values it replaced, plain or under an older key, would otherwise stay in
 * the pages the store freed.
 *
 * @module
 */
import type { ServiceContext } from './context.js';
import { resealBatch, tenants, type ResealPosition } from './repository/repository.js';
import { runTransaction } from './transactions.js';

export interface RekeyStatus {
  state: 'idle' | 'running' | 'done' | 'failed';
  startedAt?: string;
  finishedAt?: string;
  /** Tenants finished in this pass. */
  tenants: number;
  /** Stored values looked at, and those sealed again. */
  scanned: number;
  resealed: number;
  /** Checkpoints written before encryption was on, whose index keys were blinded. */
  reindexed: number;
  /** Keys forgotten at the end: nothing is sealed with them any more. */
  retired: string[];
  /** The store's files were rewritten at the end, holding only live values (false where the store cannot: FoundationDB). */
  compacted?: boolean;
  /** Why the pass stopped, when it failed. */
  error?: string;
}

const TENANTS_PER_PAGE = 100;

export class Rekeyer {
  private current: RekeyStatus = { state: 'idle', tenants: 0, scanned: 0, resealed: 0, reindexed: 0, retired: [] };
  private running: Promise<void> | undefined;
  private stopping = false;

  get status(): RekeyStatus {
    return { ...this.current, retired: [...this.current.retired] };
  }

  /** Starts a pass unless one is running; answers where it stands. */
  start(ctx: ServiceContext, retire: (keep: ReadonlySet<string>) => Promise<string[]>): RekeyStatus {
    if (this.running === undefined) {
      this.current = { state: 'running', startedAt: ctx.now().toISOString(), tenants: 0, scanned: 0, resealed: 0, reindexed: 0, retired: [] };
      this.running = this.pass(ctx, retire)
        .then(() => {
          this.current.state = 'done';
        })
        .catch((error: unknown) => {
          this.current.state = 'failed';
          this.current.error = error instanceof Error ? error.message : String(error);
          ctx.log.error({ err: error }, 'rekey pass failed');
        })
        .finally(() => {
          this.current.finishedAt = ctx.now().toISOString();
          this.running = undefined;
        });
    }
    return this.status;
  }

  /** Ends the pass in progress after its current batch (the runtime is closing); a later pass carries on. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  private async pass(ctx: ServiceContext, retire: (keep: ReadonlySet<string>) => Promise<string[]>): Promise<void> {
    const vault = ctx.vault!;
    const newest = new Set<string>();
    let skipped = false;
    let after: string | undefined;
    for (;;) {
      const page = await runTransaction(ctx, (tx) => tenants(tx, after, TENANTS_PER_PAGE), { readOnly: true });
      for (const tenant of page) {
        this.current.tenants += 1;
        const key = vault.keyring.sealingKey(tenant);
        const sealing = await vault.sealing(ctx, tenant);
        if (key === undefined || sealing === undefined) {
          skipped = true;
          continue;
        }
        newest.add(key.id);
        for (let at: ResealPosition | undefined = { space: 0 }; at !== undefined; ) {
          if (this.stopping) throw new Error('The service closed during the pass; run it again.');
          const from: ResealPosition = at;
          const batch = await runTransaction(ctx, (tx) => resealBatch(tx, tenant, sealing, key.id, from));
          this.current.scanned += batch.scanned;
          this.current.resealed += batch.resealed;
          this.current.reindexed += batch.reindexed;
          at = batch.next;
        }
      }
      if (page.length < TENANTS_PER_PAGE) break;
      after = page[page.length - 1];
    }
    // A queued write may still be sealed with an older key: those stay known until the queue has drained.
    // So may a tenant the key file no longer seals (its values were left as they are).
    if ((ctx.queue?.depth ?? 0) === 0 && !skipped) {
      for (const entry of vault.keyring.sealingKeys()) newest.add(entry.id);
      this.current.retired = await retire(newest);
    }
    this.current.compacted = await ctx.store.compact();
    ctx.log.info({ resealed: this.current.resealed, retired: this.current.retired, compacted: this.current.compacted }, 'rekey pass done');
  }
}
