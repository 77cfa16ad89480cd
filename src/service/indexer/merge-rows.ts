/**
 * A merge made from the rows it was given: a batch of the full-text pending
 * list and each of its tasks' open runs, as the indexer read them. The same
 * merge the indexer would run in a transaction (`TermRows.merge`), against a
 * transaction that answers from those rows and records each task's writes,
 * for the indexer to apply once it has checked that the rows are still as
 * they were read (`indexer.ts`, `applyMerges`). The merge thread makes its
 * merges this way (`merge-worker.ts`); so does the event loop for a tenant
 * with encryption, whose words are blinded with a key that stays there.
 *
 * @module
 */
import { codecsFor, type Sealing } from '../repository/codec.js';
import { keyspaceOf } from '../repository/keyspace.js';
import { TermRows } from '../repository/terms.js';
import type { PendingEntry } from '../repository/pending-terms.js';
import type { Bytes, KeyValue, RangeOptions, Transaction, TransactionStats } from '../../store/store.js';
import { taskGroups } from './limits.js';

/** One write of a merge: a value to set, or null to clear the key. */
export interface MergeWrite {
  key: Buffer;
  value: Buffer | null;
}

/** A task's merge: its writes, in order. */
export interface TaskMerge {
  taskId: string;
  writes: MergeWrite[];
}

/** A row the merge is given: a pending entry (listed by range), or another row it reads by key (a task's open runs). */
export interface GivenRow {
  key: Buffer;
  value: Buffer | undefined;
  entry: boolean;
}

/** Answers reads from the rows it was given (then from `fallback`, when there is one) and records every write, each task's apart. */
class RecordingTransaction implements Transaction {
  private readonly values = new Map<string, Buffer | undefined>();
  private readonly entries: KeyValue[] = [];
  readonly merges: TaskMerge[] = [];

  constructor(
    rows: Iterable<GivenRow>,
    private readonly fallback?: Transaction,
  ) {
    for (const { key, value, entry } of rows) {
      this.values.set(key.toString('latin1'), value);
      if (entry && value !== undefined) this.entries.push({ key, value });
    }
  }

  task(taskId: string): void {
    this.merges.push({ taskId, writes: [] });
  }

  async get(key: Bytes): Promise<Bytes | undefined> {
    const id = key.toString('latin1');
    if (this.values.has(id)) return this.values.get(id);
    if (this.fallback !== undefined) return this.fallback.get(key);
    throw new Error(`The merge was not given the row it reads (${key.toString('hex')}).`);
  }

  async getRange(begin: Bytes, end: Bytes, options?: RangeOptions): Promise<KeyValue[]> {
    const rows: KeyValue[] = [];
    for (const row of this.entries) if (Buffer.compare(row.key, begin) >= 0 && Buffer.compare(row.key, end) < 0) rows.push(row);
    return options?.limit === undefined ? rows : rows.slice(0, options.limit);
  }

  set(key: Bytes, value: Bytes): void {
    this.write({ key, value });
  }

  clear(key: Bytes): void {
    this.write({ key, value: null });
  }

  private write(write: MergeWrite): void {
    const task = this.merges.at(-1);
    if (task === undefined) throw new Error('A merge wrote before it named its task.');
    task.writes.push(write);
  }

  getPrefix(): Promise<KeyValue[]> {
    return unsupported();
  }
  setBlind(): void {
    unsupported();
  }
  clearBlind(): void {
    unsupported();
  }
  setUnlessHeld(): void {
    unsupported();
  }
  clearRange(): void {
    unsupported();
  }
  clearPrefix(): void {
    unsupported();
  }
  add(): void {
    unsupported();
  }
  setStamped(): void {
    unsupported();
  }
  commitStamp(): Promise<Bytes> {
    return unsupported();
  }
  stats(): TransactionStats {
    return unsupported();
  }
}

/** Thrown by {@link KEYLESS}: the merge met a word or entry written plain, which only the tenant's key can blind. */
export class KeyNeeded extends Error {
  constructor() {
    super('The merge needs the tenant\'s key: it holds a word or entry written before encryption was on.');
  }
}

/**
 * The sealing of a tenant with encryption at rest, without its key: for a
 * merge on the merge thread, which the key never reaches. The merge reads
 * and writes only plain values (its spaces are not sealed) and blinds only
 * what was written plain before encryption was on; a batch with such a word
 * or entry throws {@link KeyNeeded}, and the indexer merges it on the event
 * loop with the key. Every other batch of a sealed tenant (all of them, for
 * a tenant sealed from its first write) merges as a plain tenant's does.
 */
export const KEYLESS: Sealing = {
  seal: () => {
    throw new KeyNeeded();
  },
  open: () => {
    throw new KeyNeeded();
  },
  blind: () => {
    throw new KeyNeeded();
  },
};

function unsupported(): never {
  throw new Error('A merge reads points and ranges of its rows and writes keys; nothing else.');
}

/**
 * Each task's writes for the merge of the pending entries among `rows`, in
 * their tasks' order. `sealing`: the tenant's keys, for words and entries
 * written plain before encryption was on; `fallback`: where rows not given
 * are read (the indexer's read snapshot; the thread has none, and is given
 * every row a tenant without encryption reads).
 */
export async function mergeGiven(tenant: string, rows: Iterable<GivenRow>, sealing?: Sealing, fallback?: Transaction): Promise<TaskMerge[]> {
  const tx = new RecordingTransaction(rows, fallback);
  // On the merge thread the keyspace is in the module's default layout, whatever the store's: a merge
  // touches the word runs, the pending list and the deferred index entries, which no layout moves.
  const terms = new TermRows(tx, keyspaceOf(tenant), codecsFor(sealing), sealing, tenant);
  const { entries } = await terms.pending.list(Number.MAX_SAFE_INTEGER);
  for (const group of taskGroups(entries, entryBytes)) {
    tx.task(group[0]!.taskId);
    await terms.merge(group[0]!.taskId, group);
  }
  return tx.merges;
}

/** An entry's bytes (a module function: see `batch.ts`, `rowBytes`). */
function entryBytes(entry: PendingEntry): number {
  return entry.bytes.length;
}
