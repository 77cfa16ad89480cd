/**
 * A merge batch of the indexer (`indexer.ts`), apart from where it runs:
 * the read-only listing of a batch (its pending entries and their tasks'
 * open runs), and the application of the merges made from it, which checks
 * first that every row a merge read is still as listed. The event loop runs
 * them in its transactions; over LMDB the merge thread runs them in the
 * environment the store lends it (`merge-worker.ts`, `store/lmdb-lent.ts`).
 *
 * @module
 */
import type { KeyValue, Transaction } from '../../store/store.js';
import type { Sealing } from '../repository/codec.js';
import { Repository } from '../repository/repository.js';
import { APPLY_BYTES, MERGE_BATCH, withinBytes } from './limits.js';
import type { GivenRow, MergeWrite, TaskMerge } from './merge-rows.js';

/** A task's open runs row as a listing read it (value undefined: none). */
export type OpenRow = { key: Buffer; value: Buffer | undefined };

/** A batch as a read-only listing found it: its pending entries, their tasks' open runs, and the merge when it was made there. */
export interface Listed {
  /** Whether the listing found a full batch: more may wait behind it. */
  full: boolean;
  entries: KeyValue[];
  open: Map<string, OpenRow>;
  merges?: TaskMerge[];
}

/** Whether a listing of `listed` rows, cut to `taken` by bytes, is a full batch: more may wait behind it. */
export function fullBatch(listed: number, taken: number): boolean {
  return listed >= MERGE_BATCH || taken < listed;
}

/**
 * A batch's rows, read-only: up to a batch of pending entries and their
 * tasks' open runs; undefined when it is fewer than a full batch and
 * `drain` is false (a pass that merges full batches only). `snapshot`: the
 * entries are read without a conflict range over the list (the caller names
 * the rows it takes, {@link mergeInPlace}).
 */
export async function listBatch(tx: Transaction, tenant: string, sealing: Sealing | undefined, drain: boolean, snapshot = false): Promise<Listed | undefined> {
  const terms = new Repository(tx, tenant, sealing).terms;
  const rows = await terms.pending.rows(MERGE_BATCH, snapshot);
  const entries = withinBytes(rows, rowBytes);
  if (!drain && !fullBatch(rows.length, entries.length)) return undefined;
  // Loops, not callbacks made at each call: see `rowBytes`.
  const tasks = new Set<string>();
  for (const row of entries) tasks.add(terms.pending.positionOf(row.key)[0]);
  const reads: Array<Promise<OpenRow>> = [];
  for (const taskId of tasks) reads.push(terms.openRunsRow(taskId));
  const rowsOpen = await Promise.all(reads);
  const open = new Map<string, OpenRow>();
  let i = 0;
  for (const taskId of tasks) open.set(taskId, rowsOpen[i++]!);
  // The whole list, read at one version, in a transaction that writes: the tenant's count of entries is made to match
  // it (its last read; an empty list's count is cleared by the merge that finds it so, `mergeBatch`).
  if (snapshot && rows.length > 0 && rows.length < MERGE_BATCH) await terms.pending.recount(rows.length);
  return { full: fullBatch(rows.length, entries.length), entries, open };
}

/** A listed batch as a merge is given it (`merge-rows.ts`): its entries, then its tasks' open runs. */
export function givenRows({ entries, open }: Listed): GivenRow[] {
  const rows: GivenRow[] = [];
  for (const { key, value } of entries) rows.push({ key, value, entry: true });
  for (const { key, value } of open.values()) rows.push({ key, value, entry: false });
  return rows;
}

/**
 * A listed row's bytes. The merge thread's per-batch work is written with
 * module functions and loops rather than callbacks made at each call: a
 * callback made afresh for each batch lost its optimized code between
 * batches (the thread's collections cleared it) and was optimized again,
 * batch after batch (~80 µs of the compiler's threads a create).
 */
function rowBytes(row: KeyValue): number {
  return row.value.length;
}

/**
 * The merge thread's writes, task by task, each task's applied only if every
 * row its merge read is still as the listing read it: the task's open runs,
 * and each entry it merged (the writes clear them). Point reads only, all of
 * the batch's at once: over FoundationDB one round trip for the batch, not
 * one a row (a batch of 256 entries read ~500 rows one after the other,
 * ~0.2 s here, while creates waited for the merge to keep up). Tasks past
 * {@link APPLY_BYTES} of writes wait for the next batch. The count of entries
 * merged.
 */
export async function applyMerges(tx: Transaction, merges: readonly TaskMerge[], entries: readonly KeyValue[], open: ReadonlyMap<string, OpenRow>): Promise<number> {
  const listed = new Map<string, Buffer>();
  for (const { key, value } of entries) listed.set(key.toString('latin1'), value);
  const checks: Array<Promise<Checked>> = [];
  for (const merge of withinApplyBytes(merges)) checks.push(checkMerge(tx, merge, listed, open));
  const checked = await Promise.all(checks);
  let count = 0;
  for (const { merge, merged, same } of checked) {
    if (!same) continue;
    for (const { key, value } of merge.writes) {
      if (value === null) tx.clear(key);
      else tx.set(key, value);
    }
    count += merged;
  }
  return count;
}

interface Checked {
  merge: TaskMerge;
  /** The listed entries it takes. */
  merged: number;
  /** Whether every row its merge read is as listed. */
  same: boolean;
}

/** Whether a task's merge read rows that are still as listed: its open runs, and each entry it takes (the writes that clear a listed row). */
async function checkMerge(tx: Transaction, merge: TaskMerge, listed: ReadonlyMap<string, Buffer>, open: ReadonlyMap<string, OpenRow>): Promise<Checked> {
  const runs = open.get(merge.taskId);
  if (runs === undefined) return { merge, merged: 0, same: false };
  // Only clears are looked up.
  const keys: Buffer[] = [];
  const before: Buffer[] = [];
  for (const { key, value } of merge.writes) {
    const was = value === null ? listed.get(key.toString('latin1')) : undefined;
    if (was === undefined) continue;
    keys.push(key);
    before.push(was);
  }
  const reads: Array<Promise<Buffer | undefined>> = [tx.get(runs.key)];
  for (const key of keys) reads.push(tx.get(key));
  const now = await Promise.all(reads);
  let same = unchanged(runs.value, now[0]);
  for (let i = 0; same && i < keys.length; i++) same = unchanged(before[i], now[i + 1]);
  return { merge, merged: keys.length, same };
}

/** A transaction that names read conflicts (`Transaction.addReadConflictKey`): FoundationDB's. */
export type NamingConflicts = Transaction & Required<Pick<Transaction, 'addReadConflictKey'>>;

/** Whether `tx` names read conflicts. */
export const namesConflicts = (tx: Transaction): tx is NamingConflicts => tx.addReadConflictKey !== undefined;

/**
 * The merges of a batch listed in this same transaction, written without
 * reading anything again: over a store whose transactions overlap
 * (FoundationDB), the listed entries are named as read conflicts (the
 * listing read them without one, `listBatch`'s `snapshot`) and the tasks'
 * open runs were read by key, so the commit fails, and the body runs again,
 * if any row a merge read changed meanwhile. The tasks whose writes fit one
 * transaction ({@link APPLY_BYTES}); the count of entries merged.
 */
export function mergeInPlace(tx: NamingConflicts, merges: readonly TaskMerge[], entries: readonly KeyValue[]): number {
  const listed = new Set<string>();
  for (const { key } of entries) listed.add(key.toString('latin1'));
  let count = 0;
  for (const { writes } of withinApplyBytes(merges)) {
    for (const { key, value } of writes) {
      // An entry the merge takes off the list (a clear of a listed row): it must be as listed when this commits.
      // Most writes are sets of runs and index entries: only a clear is looked up, not each of ~6,000 keys a batch.
      if (value === null && listed.has(key.toString('latin1'))) {
        tx.addReadConflictKey(key);
        count += 1;
      }
      if (value === null) tx.clear(key);
      else tx.set(key, value);
    }
  }
  return count;
}

/** The first tasks' merges whose writes fit one transaction ({@link APPLY_BYTES}); the first always. */
export function withinApplyBytes(merges: readonly TaskMerge[]): readonly TaskMerge[] {
  let bytes = 0;
  for (const [i, { writes }] of merges.entries()) {
    // The store counts each written key twice (FoundationDB's count).
    let size = 0;
    for (const { key, value } of writes) size += 2 * key.length + (value?.length ?? 0);
    if (bytes > 0 && bytes + size > APPLY_BYTES) return merges.slice(0, i);
    bytes += size;
  }
  return merges;
}

/** The runs the merges open (keys set that `isRun` names) apart from the rest of their writes. */
export function splitRuns(merges: readonly TaskMerge[], isRun: (key: Buffer) => boolean): { runs: KeyValue[]; rest: TaskMerge[] } {
  const runs: KeyValue[] = [];
  const rest: TaskMerge[] = [];
  for (const { taskId, writes } of merges) {
    const others: MergeWrite[] = [];
    for (const write of writes) {
      if (write.value !== null && isRun(write.key)) runs.push({ key: write.key, value: write.value });
      else others.push(write);
    }
    rest.push({ taskId, writes: others });
  }
  return { runs, rest };
}

function unchanged(before: Buffer | undefined, now: Buffer | undefined): boolean {
  return before === undefined ? now === undefined : now !== undefined && now.equals(before);
}
