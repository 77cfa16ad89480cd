/**
 * The indexer: merges the full-text pending list (`repository/pending-terms.ts`)
 * into the word runs (`repository/terms.ts`), off the request path, as
 * PostgreSQL's GIN `fastupdate` merges its pending list in bulk. A create
 * adds its words to the list in its own transaction and pokes the indexer;
 * the indexer waits a moment for more, then merges each tenant's list in
 * batches of {@link MERGE_BATCH}, every task's pending checkpoints
 * together. The merge itself is made on the indexer's thread
 * (`merge-worker.ts`) and applied here in one transaction a batch, which
 * checks first that what the merge read is unchanged. A tenant with
 * encryption at rest merges there too (its words and entries are blind
 * already; the key never reaches the thread), except a batch holding a word
 * or entry written before encryption was on, which only the key can blind:
 * that batch, and every batch once the thread has failed, is merged on the
 * event loop. A batch merges and removes its entries atomically,
 * so after a crash the list holds exactly what is left: nothing is merged
 * twice or lost. Over LMDB the runs a batch opens are committed apart
 * first (`runs-apart.ts`); a crash between the two commits leaves the
 * entries listed, and their merge writes the same runs again. It is a duty (`fleet/duties.ts`): over FoundationDB one
 * instance at a time merges; the others' creates are merged by the holder,
 * found through the tenants marked due, at least once a second. An instance
 * started with `BATON_INDEXER=off` never merges.
 *
 * The list is bounded: a search reads it whole beside the runs, so once
 * this instance's unmerged creates pass `BATON_INDEXER_PENDING_BOUND`
 * (half of {@link PENDING_LIMIT} by default), creates wait for the merge in
 * progress ({@link Indexer.admit}) rather than let searches degrade. Only
 * the duty's holder counts them here; over a shared store every instance's
 * creates also wait on the tenant's count the store keeps
 * (`pending-gate.ts`), which is how the others' creates are bounded.
 *
 * @module
 */
import type { ServiceContext } from '../context.js';
import { dutyPeriodic } from '../fleet/duties.js';
import type { Periodic } from '../maintenance/periodic.js';
import { Repository, runKeys, tenantsWithPendingTerms, type PendingEntry } from '../repository/repository.js';
import type { Sealing } from '../repository/codec.js';
import { runTransaction } from '../transactions.js';
import { applyMerges, fullBatch, givenRows, listBatch, mergeInPlace, namesConflicts, splitRuns, withinApplyBytes, type Listed, type OpenRow } from './batch.js';
import { MERGE_BATCH, PENDING_LIMIT, taskGroups, withinBytes } from './limits.js';
import { MERGE_THREAD, type MergeThread } from './merge-thread.js';
import { mergeGiven, type TaskMerge } from './merge-rows.js';
import { writeApart } from './runs-apart.js';
import type { KeyValue, Store } from '../../store/store.js';

/** A store that lends its files and its writer to the merge thread (LMDB: `store/lmdb-lent.ts`). */
type Lending = Required<Pick<Store, 'lendReader' | 'lendWriter' | 'keepLent'>>;

/** A batch merged: how many entries, and whether its listing was a full batch (more may wait behind it). */
interface Batch {
  merged: number;
  full: boolean;
}

/** What a batch answers when it found fewer entries than a batch and merged none, in a pass that merges full batches only. */
const LEFT = 'left';

/** How often the indexer looks for tenants marked due without a poke (another instance's creates, a restart). */
const SWEEP_MS = 1_000;
/** Tenants read per page of the due marks. */
const TENANT_PAGE = 100;
/** A merge's transaction: no caller waits for it, so no create's commit waits for it either (`store.ts`). */
const BACKGROUND = { background: true } as const;
/** A merge in one transaction over FoundationDB: it reads the batch, then only writes (`TransactOptions.writesUnread`). */
const BACKGROUND_WRITES_UNREAD = { background: true, writesUnread: true } as const;

export interface IndexerFigures {
  /** Checkpoints merged since start. */
  merged: number;
  /** Merge transactions committed since start. */
  batches: number;
  /** Of the checkpoints merged, those whose merge the merge thread made. */
  onThread: number;
  /** This instance's creates not merged yet, as far as it knows. */
  backlog: number;
}

export class Indexer {
  private timer: Periodic | undefined;
  private poked: NodeJS.Timeout | undefined;
  private unmerged = 0;
  private merged = 0;
  private batches = 0;
  private onThread = 0;
  /** When this instance last ran the duty (ms since the epoch); 0 while another instance holds it. */
  private heldAt = 0;
  /**
   * Whether the pass in progress merges until every list is empty (a sweep,
   * a poke's delay, `settle`, `admit`), or only while its batches are full
   * (a poke once a full batch waits): a merge costs about as much for a few
   * entries as for a batch of them (a listing, the thread's round trip, a
   * transaction and its commit), so under load it waits for a full batch.
   */
  private drain = true;

  /**
   * `delayMs`: how long a poke waits for more creates before the merge
   * starts (`BATON_INDEXER_DELAY_MS`); `sweepMs`: how often it looks for
   * work without a poke.
   */
  constructor(
    private readonly ctx: ServiceContext,
    private readonly delayMs: number,
    private readonly sweepMs = SWEEP_MS,
    /** Where a tenant without encryption is merged: beside the event loop (`merge-worker.ts`). */
    private readonly thread: MergeThread = MERGE_THREAD,
  ) {}

  /** Starts the periodic sweep; pokes merge from now on. */
  start(): void {
    this.timer ??= dutyPeriodic(this.ctx, 'indexer', this.sweepMs, (state) => this.mergeAll(state));
  }

  /** Stops, letting the merge in progress finish, and hands the duty back. */
  async stop(): Promise<void> {
    clearTimeout(this.poked);
    this.poked = undefined;
    await this.timer?.stop();
    this.timer = undefined;
  }

  /** Merges now what this instance can (a run in progress finishes first, then one more): the list settled once creates have stopped. */
  async settle(): Promise<void> {
    this.drain = true;
    await this.timer?.kick();
    this.drain = true;
    await this.timer?.kick();
  }

  /** A create committed an entry to the list: a merge starts once a full batch waits, or after the delay. */
  poke(): void {
    const holding = this.holding();
    if (holding) {
      this.unmerged += 1;
      this.ctx.metrics.indexerBacklog.set(this.unmerged);
    }
    if (this.timer === undefined) return;
    if (holding && this.unmerged >= MERGE_BATCH) {
      // A pass already running keeps its mode; a new one merges the full batches and leaves the rest for later.
      this.drain = false;
      void this.timer.kick();
      return;
    }
    if (this.poked !== undefined) return;
    this.poked = setTimeout(() => {
      this.poked = undefined;
      this.drain = true;
      void this.timer?.kick();
    }, this.delayMs);
    this.poked.unref();
  }

  /** Resolves when a create may go on: at once, unless this instance's unmerged creates are past the bound (`BATON_INDEXER_PENDING_BOUND`). */
  async admit(): Promise<void> {
    while (this.timer !== undefined && this.holding() && this.unmerged > (this.ctx.pendingBound ?? PENDING_LIMIT / 2)) {
      const before = this.merged;
      this.drain = true;
      await this.timer.kick();
      // Another instance holds the duty (or the store is down): waiting here would not shorten the list.
      if (this.merged === before) return;
    }
  }

  figures(): IndexerFigures {
    return { merged: this.merged, batches: this.batches, backlog: this.unmerged, onThread: this.onThread };
  }

  /** Whether this instance ran the duty within its last three intervals (over LMDB, always once it has run). */
  private holding(): boolean {
    const held = this.ctx.now().getTime() - this.heldAt < 3 * this.sweepMs;
    if (!held && this.unmerged > 0) {
      this.unmerged = 0;
      this.ctx.metrics.indexerBacklog.set(0);
    }
    return held;
  }

  /**
   * Merges every tenant marked due, until each one's list is empty or a
   * batch was short of full (what arrived while it merged waits for the next
   * pass: under a steady load a pass that chased its tail merged ~10 entries
   * a batch, each batch a listing, two commits and their fsyncs), or (a
   * pass a full batch started) until its batches are no longer full (the
   * duty's runs never overlap); run only while this instance holds the
   * duty. A pass that ends with every list empty sets the backlog to 0,
   * which also forgets entries removed unmerged (a compaction's).
   */
  private async mergeAll(state: { readonly stopped: boolean }): Promise<void> {
    this.heldAt = this.ctx.now().getTime();
    // A pass started by a full batch merges full batches only; every other pass (the sweep's among them) drains.
    const drain = this.drain;
    this.drain = true;
    // A full batch's poke that came while a pass ran finds that pass merged it: listing the rest only to leave it
    // cost a read of up to a batch of entries (over FoundationDB ~150 ms under load, a fifth of the merge's time).
    if (!drain && this.unmerged < MERGE_BATCH) return;
    let after: string | undefined;
    let emptied = true;
    for (;;) {
      const tenants = await runTransaction(this.ctx, (tx) => tenantsWithPendingTerms(tx, after, TENANT_PAGE), { readOnly: true });
      for (const tenant of tenants) emptied = (await this.mergeTenant(tenant, state, drain)) && emptied;
      if (state.stopped) return;
      if (tenants.length < TENANT_PAGE) break;
      after = tenants.at(-1);
    }
    if (!emptied) return;
    this.unmerged = 0;
    this.ctx.metrics.indexerBacklog.set(0);
  }

  /**
   * Merges one tenant's list in batches until a batch finds it empty, which
   * clears the tenant's mark. Each batch is found by a read-only listing
   * first, and the merge transaction reads again only the keys of the
   * entries it takes ({@link mergeEntries}).
   */
  private async mergeTenant(tenant: string, state: { readonly stopped: boolean }, drain: boolean): Promise<boolean> {
    const sealing = this.ctx.vault === undefined ? undefined : await this.ctx.vault.sealing(this.ctx, tenant);
    for (;;) {
      // Still the holder: a pass under load runs for as long as creates keep coming.
      this.heldAt = this.ctx.now().getTime();
      const lending = this.thread.available ? this.lending() : undefined;
      const batch = lending !== undefined ? await this.mergeLent(tenant, sealing, drain, lending) : this.thread.available ? await this.mergeOnThread(tenant, sealing, drain) : await this.mergeHere(tenant, sealing, drain);
      // Fewer than a batch, left for the next full batch, the delay or the sweep.
      if (batch === LEFT) return false;
      const count = batch.merged;
      if (count === 0) return true;
      this.merged += count;
      this.batches += 1;
      this.unmerged = Math.max(0, this.unmerged - count);
      this.ctx.metrics.indexerMerged.inc(count);
      this.ctx.metrics.indexerBacklog.set(this.unmerged);
      if (state.stopped) return false;
      // A batch short of full took what there was: what arrived meanwhile waits for the next pass rather than a batch of a few.
      if (!batch.full) return false;
    }
  }

  /**
   * One batch merged on the event loop. With runs apart, made from a
   * read-only listing and applied as the thread's are ({@link applyBatch});
   * otherwise listed first, then read again by key in one merge transaction
   * ({@link mergeEntries}).
   */
  private async mergeHere(tenant: string, sealing: Sealing | undefined, drain: boolean): Promise<Batch | typeof LEFT> {
    if (this.ctx.runsApart?.merges === true) {
      const listed = await this.list(tenant, sealing, drain, true);
      if (listed === undefined) return LEFT;
      if (listed.entries.length === 0) return { merged: await runTransaction(this.ctx, (tx) => mergeBatch(new Repository(tx, tenant, sealing)), BACKGROUND), full: false };
      const merged = await this.applyBatch(tenant, listed.merges!, listed.entries, listed.open);
      // Entries a batch listed and left (past a transaction's bytes, or their task changed) wait behind it as a full batch's would.
      return { merged, full: listed.full || merged < listed.entries.length };
    }
    const listed = await runTransaction(this.ctx, async (tx) => (await new Repository(tx, tenant, sealing).terms.pending.list(MERGE_BATCH)).entries, { readOnly: true });
    const entries = withinBytes(listed, (entry) => entry.bytes.length);
    const full = fullBatch(listed.length, entries.length);
    if (!drain && !full) return LEFT;
    const merged = await runTransaction(this.ctx, (tx) => (entries.length === 0 ? mergeBatch(new Repository(tx, tenant, sealing)) : mergeEntries(new Repository(tx, tenant, sealing), entries)), BACKGROUND);
    return { merged, full: full || merged < entries.length };
  }

  /**
   * A batch's rows, read-only: up to a batch of pending entries and their
   * tasks' open runs (undefined: fewer than a full batch, in a pass that
   * merges full batches only); with `here`, the merge made from them on
   * the event loop, reading any other row on the same snapshot.
   */
  private async list(tenant: string, sealing: Sealing | undefined, drain: boolean, here: boolean): Promise<Listed | undefined> {
    return runTransaction(
      this.ctx,
      async (tx) => {
        const listed = await listBatch(tx, tenant, sealing, drain);
        if (listed === undefined || !here || listed.entries.length === 0) return listed;
        return { ...listed, merges: await mergeGiven(tenant, givenRows(listed), sealing, tx) };
      },
      { readOnly: true },
    );
  }

  /**
   * Applies a batch's merges: the tasks whose writes fit one transaction,
   * their runs apart first when runs are kept apart (`runs-apart.ts`:
   * whatever the merge takes off the list is in them by then), then the
   * rest in one transaction ({@link applyMerges}). The count of entries merged.
   */
  private async applyBatch(tenant: string, merges: readonly TaskMerge[], entries: readonly KeyValue[], open: ReadonlyMap<string, OpenRow>): Promise<number> {
    const batch = withinApplyBytes(merges);
    const apart = this.ctx.runsApart;
    let here = batch;
    if (apart?.merges === true) {
      const split = splitRuns(batch, runKeys(tenant).has);
      await writeApart(this.ctx, apart.store, split.runs);
      here = split.rest;
    }
    return runTransaction(
      this.ctx,
      async (tx) => {
        const merged = await applyMerges(tx, here, entries, open);
        new Repository(tx, tenant).terms.pending.taken(merged);
        return merged;
      },
      BACKGROUND,
    );
  }

  /** The batch the merge thread failed (`error`), and every later one, merged on the event loop. */
  private mergeHereAfter(error: unknown, tenant: string, sealing: Sealing | undefined): Promise<Batch | typeof LEFT> {
    this.ctx.log.warn({ err: error, tenant }, 'the indexer merges on the event loop: its merge thread failed');
    return this.mergeHere(tenant, sealing, true);
  }

  /**
   * The store and the runs apart, when both lend themselves to the merge
   * thread (LMDB); undefined otherwise (FoundationDB, a store wrapped to
   * inject faults), where the thread's writes come back here.
   */
  private lending(): { store: Lending; runs: Lending | undefined } | undefined {
    const lends = (store: Partial<Lending>): store is Lending => store.lendReader !== undefined && store.lendWriter !== undefined && store.keepLent !== undefined;
    const { store, runsApart } = this.ctx;
    if (!lends(store)) return undefined;
    if (runsApart?.merges !== true) return { store, runs: undefined };
    return lends(runsApart.store) ? { store, runs: runsApart.store } : undefined;
  }

  /**
   * One batch merged wholly off the event loop (LMDB): the store lends the
   * merge thread the environment to list the batch and make its merge, then
   * the runs apart their writer for the runs the merge opens; the merge
   * then goes to the commit thread (at the process's priority, since every
   * create waits while it holds the writer), to which the store lends its
   * own writer for the merge, which checks first that every row it read is
   * unchanged (`batch.ts`, `applyMerges`). The batch's keys and values stay
   * off the event loop's heap: it only takes turns, passes one buffer on and
   * counts. A failed thread hands the batch to the event loop, as in
   * {@link mergeOnThread}.
   */
  private async mergeLent(tenant: string, sealing: Sealing | undefined, drain: boolean, lending: { store: Lending; runs: Lending | undefined }): Promise<Batch | typeof LEFT> {
    // The thread keeps each store's environment open between batches: the store asks for it back before it closes or swaps it.
    lending.store.keepLent(this.thread.release);
    lending.runs?.keepLent(this.thread.release);
    let prepared;
    try {
      prepared = await lending.store.lendReader((lease) => this.thread.prepare({ tenant, lease, sealed: sealing !== undefined, drain, runsApart: lending.runs !== undefined }));
    } catch (error) {
      if (this.thread.available) throw error;
      return this.mergeHereAfter(error, tenant, sealing);
    }
    const { state, batch, count, full } = prepared;
    if (state === 'left') return LEFT;
    if (state === 'empty') return { merged: await runTransaction(this.ctx, (tx) => mergeBatch(new Repository(tx, tenant, sealing)), BACKGROUND), full: false };
    // A sealed tenant's batch with a word or entry written before encryption was on: blinded here, with the key.
    if (state === 'keyNeeded') return this.mergeHere(tenant, sealing, true);
    let merged: number;
    try {
      if (lending.runs !== undefined) await lending.runs.lendWriter((lease) => this.thread.commitRuns(batch, lease));
      // Taken before the writer is lent: the store's writer is held only for the commit thread's check and commit.
      const merge = await this.thread.take(batch);
      merged = await lending.store.lendWriter(async (lease) => {
        // The writer is this merge's from here to its commit: every create's commit waits meanwhile.
        const held = performance.now();
        try {
          return await this.thread.commit(merge, lease);
        } finally {
          this.ctx.metrics.indexerWriterHeld.observe(performance.now() - held);
        }
      });
    } catch (error) {
      await this.thread.drop(batch);
      if (this.thread.available) throw error;
      return this.mergeHereAfter(error, tenant, sealing);
    }
    this.onThread += merged;
    return { merged, full: full || merged < count };
  }

  /**
   * One batch merged on the merge thread in one transaction of a store whose
   * transactions overlap (FoundationDB): the entries are listed without a
   * conflict range over the list (the entries creates add meanwhile do not
   * make it run again) and the tasks' open runs read by key, the thread makes
   * each task's writes, and the same transaction writes them, with the
   * entries it takes named as read conflicts (`batch.ts`, `mergeInPlace`):
   * nothing is read twice, and a row changed meanwhile makes the commit fail
   * and the batch start over. A listing transaction and a batch's ~500 reads
   * fewer than {@link mergeOnThread} makes otherwise. Every read comes
   * before the writes, so the client keeps no read-your-writes map of the
   * batch's thousands of sets (`TransactOptions.writesUnread`). A thread that
   * fails hands the batch, and the ones after it, to the event loop.
   */
  private async mergeInOne(tenant: string, sealing: Sealing | undefined, drain: boolean): Promise<Batch | typeof LEFT> {
    const outcome = await runTransaction(
      this.ctx,
      async (tx): Promise<Batch | typeof LEFT | NotInOne> => {
        if (!namesConflicts(tx)) throw new Error('A merge in one transaction needs a store whose transactions name read conflicts.');
        const listed = await listBatch(tx, tenant, sealing, drain, true);
        if (listed === undefined) return LEFT;
        if (listed.entries.length === 0) return { merged: await mergeBatch(new Repository(tx, tenant, sealing)), full: false };
        let merges: TaskMerge[] | undefined;
        try {
          merges = await this.thread.merge(tenant, listed.entries, [...listed.open.values()], sealing !== undefined);
        } catch (error) {
          return { thread: error };
        }
        // A sealed tenant's batch with a word or entry written before encryption was on: blinded on the event loop, with the key.
        if (merges === undefined) return 'keyNeeded';
        const merged = mergeInPlace(tx, merges, listed.entries);
        new Repository(tx, tenant, sealing).terms.pending.taken(merged);
        return { merged, full: listed.full || merged < listed.entries.length };
      },
      BACKGROUND_WRITES_UNREAD,
    );
    if (outcome === 'keyNeeded') return this.mergeHere(tenant, sealing, true);
    if (outcome !== LEFT && 'thread' in outcome) return this.mergeHereAfter(outcome.thread, tenant, sealing);
    if (outcome !== LEFT) this.onThread += outcome.merged;
    return outcome;
  }

  /**
   * One batch merged on the merge thread: the entries and their tasks' open
   * runs are read (read-only), the thread makes each task's writes, and one
   * transaction applies the writes of every task whose rows are still as
   * they were read (a create, a change or a purge since leaves that task's
   * entries for the next batch). A thread that fails hands the batch, and
   * the ones after it, to the event loop.
   */
  private async mergeOnThread(tenant: string, sealing: Sealing | undefined, drain: boolean): Promise<Batch | typeof LEFT> {
    if (this.ctx.store.name === 'fdb') return this.mergeInOne(tenant, sealing, drain);
    const listed = await this.list(tenant, sealing, drain, false);
    if (listed === undefined) return LEFT;
    if (listed.entries.length === 0) return { merged: await runTransaction(this.ctx, (tx) => mergeBatch(new Repository(tx, tenant, sealing)), BACKGROUND), full: false };
    let merges: TaskMerge[] | undefined;
    try {
      merges = await this.thread.merge(tenant, listed.entries, [...listed.open.values()], sealing !== undefined);
    } catch (error) {
      return this.mergeHereAfter(error, tenant, sealing);
    }
    // A sealed tenant's batch with a word or entry written before encryption was on: blinded here, with the key.
    if (merges === undefined) return this.mergeHere(tenant, sealing, true);
    const merged = await this.applyBatch(tenant, merges, listed.entries, listed.open);
    this.onThread += merged;
    return { merged, full: listed.full || merged < listed.entries.length };
  }
}

/** What a batch merged in one transaction ({@link Indexer.mergeInOne}) hands back when it could not be made there. */
type NotInOne = { thread: unknown } | 'keyNeeded';

/**
 * One merge transaction over entries a read-only listing found (in key
 * order: a task's together, in its order). Each is read again by its key:
 * point reads, no range read in the write (which the LMDB store answers by
 * sorting its pending writes), and over FoundationDB a read conflict range
 * of exactly these keys, so the entries creates add meanwhile do not make
 * it start over. One gone since (its checkpoint compacted or purged) is
 * left out; one rewritten since (its checkpoint changed) is merged as it is
 * now.
 */
async function mergeEntries(repo: Repository, listed: readonly PendingEntry[]): Promise<number> {
  let count = 0;
  for (const group of taskGroups(listed, (entry) => entry.bytes.length)) {
    const now: PendingEntry[] = [];
    for (const entry of group) {
      const current = await repo.terms.pending.current(entry);
      if (current !== undefined) now.push(current);
    }
    if (now.length > 0) await repo.terms.merge(now[0]!.taskId, now);
    count += now.length;
  }
  return count;
}

/**
 * One merge transaction: up to `limit` entries of the tenant's
 * list, each task's merged together; 0 when the list is empty (the tenant's
 * mark is cleared then).
 */
export async function mergeBatch(repo: Repository, limit = MERGE_BATCH): Promise<number> {
  const entries = withinBytes((await repo.terms.pending.list(limit)).entries, (entry) => entry.bytes.length);
  if (entries.length === 0) {
    repo.terms.pending.settled();
    return 0;
  }
  let count = 0;
  for (const group of taskGroups(entries, (entry) => entry.bytes.length)) {
    await repo.terms.merge(group[0]!.taskId, group);
    count += group.length;
  }
  return count;
}
