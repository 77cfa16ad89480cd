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
 * The pass is the fleet's, not the process's (DESIGN §10): its record in the
 * store (`repository/rekey-pass.ts`) names the instance that runs it, its
 * progress and its heartbeat, so every instance answers `GET` alike, and a
 * start decides in its own transaction whether a pass is running, so two
 * instances asked at once start one. The holder rewrites the record with
 * each batch, in the batch's transaction, and at least every
 * {@link REKEY_REFRESH_MS}; a running pass not refreshed within
 * {@link REKEY_TTL_MS} (plus the clock-skew allowance) is reported
 * `interrupted`, since its instance stopped or lost the store, and the next
 * start takes it over. Each batch re-reads the record, so a holder that
 * comes back after being taken over stops at its next batch instead of
 * running beside the new pass.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Transaction } from '../store/store.js';
import type { ServiceContext } from './context.js';
import { periodic } from './maintenance/periodic.js';
import { readRekeyPass, resealBatch, tenants, writeRekeyPass, type RekeyPassRecord, type ResealPosition } from './repository/repository.js';
import { runTransaction } from './transactions.js';
import { clearPlainApart, runsReader } from './indexer/runs-apart.js';

export interface RekeyStatus {
  /** `interrupted`: the pass stopped before its end (its instance closed, died or lost the store); start it again. */
  state: 'idle' | 'running' | 'done' | 'failed' | 'interrupted';
  /** The instance that runs (or ran) the pass. */
  instanceId?: string;
  startedAt?: string;
  /** When the instance running the pass last wrote its progress (that instance's clock). */
  heartbeatAt?: string;
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
  /** Why the pass stopped, when it failed or was interrupted. */
  error?: string;
}

/** Forgets, inside `tx`, the keys outside `keep` that nothing needs any more; answers them. */
export type RetireKeys = (tx: Transaction, keep: ReadonlySet<string>) => Promise<string[]>;

/** How often the instance running a pass refreshes its record when no batch has. */
export const REKEY_REFRESH_MS = 5_000;
/** A running pass not refreshed for this long (plus the clock-skew allowance) is its dead instance's: reported `interrupted`, taken over by a start. */
export const REKEY_TTL_MS = 3 * REKEY_REFRESH_MS;
const TTL_REFRESHES = REKEY_TTL_MS / REKEY_REFRESH_MS;

const TENANTS_PER_PAGE = 100;
const IDLE: RekeyStatus = { state: 'idle', tenants: 0, scanned: 0, resealed: 0, reindexed: 0, retired: [] };
const LAPSED = 'The instance running the pass stopped refreshing it (it stopped, died or lost the store); start the pass again.';
const CLOSED = 'The service closed during the pass; run it again.';

/** The pass's record names another pass: a start elsewhere took it over while this instance was thought dead. */
class PassTakenOver extends Error {
  constructor() {
    super('Another instance took the rekey pass over.');
  }
}

/** A pass this instance starts or runs: its starting transaction, then the pass until its end is recorded. */
interface LocalPass {
  id: string;
  started?: Promise<RekeyPassRecord>;
  done?: Promise<void>;
}

export class Rekeyer {
  private local: LocalPass | undefined;
  private stopping = false;
  private lastWrite = 0;
  private readonly refreshMs: number;
  private readonly ttlMs: number;

  constructor(
    private readonly instanceId: string,
    options: { refreshMs?: number } = {},
  ) {
    this.refreshMs = options.refreshMs ?? REKEY_REFRESH_MS;
    this.ttlMs = TTL_REFRESHES * this.refreshMs;
  }

  /** Where the fleet's pass stands, as the store holds it. */
  async status(ctx: ServiceContext): Promise<RekeyStatus> {
    return this.report(ctx, await runTransaction(ctx, (tx) => readRekeyPass(tx), { readOnly: true }));
  }

  /** Starts a pass here unless one runs anywhere in the fleet; answers the pass that runs. */
  async start(ctx: ServiceContext, retire: RetireKeys): Promise<RekeyStatus> {
    if (this.local !== undefined) {
      // Asked again while this instance starts or runs a pass: the answer is that pass, once its record is written.
      await this.local.started?.catch(() => undefined);
      return this.status(ctx);
    }
    const now = ctx.now().toISOString();
    const fresh: RekeyPassRecord = { passId: randomUUID(), state: 'running', instanceId: this.instanceId, startedAt: now, heartbeatAt: now, tenants: 0, scanned: 0, resealed: 0, reindexed: 0, retired: [] };
    // Claimed before the transaction: a second start on this instance meanwhile must see this one as alive.
    const local: LocalPass = { id: fresh.passId };
    this.local = local;
    let record: RekeyPassRecord;
    try {
      local.started = runTransaction(ctx, async (tx) => {
        const current = await readRekeyPass(tx);
        if (current !== undefined && current.passId !== fresh.passId && current.state === 'running' && this.alive(ctx, current)) return current;
        writeRekeyPass(tx, fresh);
        return fresh;
      });
      record = await local.started;
    } catch (error) {
      this.local = undefined;
      throw error;
    }
    if (record.passId === fresh.passId) local.done = this.run(ctx, fresh.passId, retire);
    else this.local = undefined;
    return this.report(ctx, record);
  }

  /** Ends the pass in progress after its current batch (the runtime is closing); a later pass carries on. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.local?.started?.catch(() => undefined);
    await this.local?.done;
  }

  private report(ctx: ServiceContext, record: RekeyPassRecord | undefined): RekeyStatus {
    if (record === undefined) return IDLE;
    const { passId: _, ...status } = record;
    if (record.state === 'running' && !this.alive(ctx, record)) return { ...status, state: 'interrupted', error: LAPSED };
    return status;
  }

  /**
   * Whether a running record's holder still runs it: this instance knows its
   * own pass (a record naming it that it no longer runs was left by its
   * previous life); another's is alive while its heartbeat is within the TTL.
   */
  private alive(ctx: ServiceContext, record: RekeyPassRecord): boolean {
    if (record.instanceId === this.instanceId) return this.local?.id === record.passId;
    return Date.parse(record.heartbeatAt) + this.ttlMs + ctx.clockSkewMs >= ctx.now().getTime();
  }

  private run(ctx: ServiceContext, passId: string, retire: RetireKeys): Promise<void> {
    const heartbeat = periodic('rekey heartbeat', this.refreshMs, ctx.log, () => this.beat(ctx, passId));
    return this.pass(ctx, passId, retire)
      .then((compacted) => this.finish(ctx, passId, { state: 'done', compacted }))
      .then((record) => ctx.log.info({ resealed: record?.resealed, retired: record?.retired, compacted: record?.compacted }, 'rekey pass done'))
      .catch(async (error: unknown) => {
        if (error instanceof PassTakenOver) return ctx.log.warn({ passId }, 'rekey pass taken over by another instance; this one stops');
        ctx.log.error({ err: error }, 'rekey pass failed');
        const message = error instanceof Error ? error.message : String(error);
        await this.finish(ctx, passId, { state: this.stopping ? 'interrupted' : 'failed', error: message });
      })
      // Without the store the end cannot be written: the record lapses into `interrupted` on its own.
      .catch((error: unknown) => ctx.log.error({ err: error }, 'the end of the rekey pass could not be recorded'))
      .finally(async () => {
        await heartbeat.stop();
        this.local = undefined;
      });
  }

  /** The pass itself; answers whether the store's files were compacted at the end. */
  private async pass(ctx: ServiceContext, passId: string, retire: RetireKeys): Promise<boolean> {
    const vault = ctx.vault!;
    const apart = runsReader(ctx);
    const newest = new Set<string>();
    let skipped = false;
    let after: string | undefined;
    for (;;) {
      const page = await runTransaction(ctx, (tx) => tenants(tx, after, TENANTS_PER_PAGE), { readOnly: true });
      for (const tenant of page) {
        const key = vault.keyring.sealingKey(tenant);
        const sealing = await vault.sealing(ctx, tenant);
        if (key === undefined || sealing === undefined) {
          skipped = true;
          await this.step(ctx, passId, async (tx, pass) => this.advance(ctx, tx, pass, { tenants: 1 }));
          continue;
        }
        newest.add(key.id);
        for (let at: ResealPosition | undefined = { space: 0 }; at !== undefined; ) {
          if (this.stopping) throw new Error(CLOSED);
          const from: ResealPosition = at;
          at = await this.step(ctx, passId, async (tx, pass) => {
            const batch = await resealBatch(tx, tenant, sealing, key.id, from, apart);
            this.advance(ctx, tx, pass, { ...batch, tenants: batch.next === undefined ? 1 : 0 });
            return batch.next;
          });
        }
        // Every plain run kept apart has been moved beside the rest, blinded (`terms.respell`).
        if (ctx.runsApart !== undefined) await clearPlainApart(ctx, ctx.runsApart.store, tenant);
      }
      if (page.length < TENANTS_PER_PAGE) break;
      after = page[page.length - 1];
    }
    // A queued write may still be sealed with an older key: those stay known until the queue has drained.
    // So may a tenant the key file no longer seals (its values were left as they are).
    if ((ctx.queue?.depth ?? 0) === 0 && !skipped) {
      for (const entry of vault.keyring.sealingKeys()) newest.add(entry.id);
      await this.step(ctx, passId, async (tx, pass) => writeRekeyPass(tx, { ...pass, retired: await retire(tx, newest), heartbeatAt: ctx.now().toISOString() }));
    }
    return ctx.store.compact();
  }

  /**
   * One step of the pass in a transaction that first reads the pass's
   * record: a record that is no longer this pass's, or no longer running,
   * stops the pass there, having written nothing. Each step writes the
   * record, so it refreshes the heartbeat too.
   */
  private async step<T>(ctx: ServiceContext, passId: string, body: (tx: Transaction, pass: RekeyPassRecord) => Promise<T>): Promise<T> {
    const result = await runTransaction(ctx, async (tx) => {
      const pass = await readRekeyPass(tx);
      if (pass?.passId !== passId || pass.state !== 'running') throw new PassTakenOver();
      return body(tx, pass);
    });
    this.lastWrite = Date.now();
    return result;
  }

  /** Adds a step's counts to the record, which refreshes its heartbeat too. */
  private advance(ctx: ServiceContext, tx: Transaction, pass: RekeyPassRecord, step: { tenants: number; scanned?: number; resealed?: number; reindexed?: number }): void {
    writeRekeyPass(tx, {
      ...pass,
      tenants: pass.tenants + step.tenants,
      scanned: pass.scanned + (step.scanned ?? 0),
      resealed: pass.resealed + (step.resealed ?? 0),
      reindexed: pass.reindexed + (step.reindexed ?? 0),
      heartbeatAt: ctx.now().toISOString(),
    });
  }

  /** Refreshes the heartbeat between batches (a tenant's key loading, the retirement, the compaction); skipped while batches refresh it. */
  private async beat(ctx: ServiceContext, passId: string): Promise<void> {
    if (Date.now() - this.lastWrite < this.refreshMs / 2) return;
    await runTransaction(ctx, async (tx) => {
      const pass = await readRekeyPass(tx);
      if (pass?.passId === passId && pass.state === 'running') writeRekeyPass(tx, { ...pass, heartbeatAt: ctx.now().toISOString() });
    });
    this.lastWrite = Date.now();
  }

  /** Records how the pass ended, unless another start took it over; answers the record written. */
  private finish(ctx: ServiceContext, passId: string, end: Pick<RekeyPassRecord, 'state' | 'compacted' | 'error'>): Promise<RekeyPassRecord | undefined> {
    return runTransaction(ctx, async (tx) => {
      const pass = await readRekeyPass(tx);
      if (pass?.passId !== passId) return undefined;
      const now = ctx.now().toISOString();
      const ended: RekeyPassRecord = { ...pass, ...end, finishedAt: now, heartbeatAt: now };
      writeRekeyPass(tx, ended);
      return ended;
    });
  }
}
