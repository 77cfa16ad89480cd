/**
 * One attempt's view of a FoundationDB transaction, in the store's own keys:
 * the store's prefix goes in front of every key, and {@link AttemptLimits}
 * checks and counts every operation exactly as the LMDB store does.
 *
 * @module
 */
import type { FdbTransaction } from './fdb-binding.js';
import type { CommittedReads, CommittedValues } from './fdb-committed.js';
import { AttemptLimits } from './limits.js';
import { COMMIT_STAMP_BYTES, encodeCounter, prefixEnd, StoreError } from './store.js';
import type { Bytes, KeyValue, RangeOptions, Transaction, TransactionStats } from './store.js';

export class FdbTransactionView implements Transaction {
  private readonly tn: FdbTransaction;
  private readonly prefix: Bytes;
  private readonly stamp: Promise<Bytes>;
  private readonly readOnly: boolean;
  readonly limits = new AttemptLimits();
  /** Other processes write this store too (`Transaction.shared`). */
  readonly shared = true;
  /** Whether the attempt wrote anything: only then does its commit have a stamp and an outcome to learn. */
  wrote = false;
  private open = true;
  /** Point reads answered from the process's last commits (`fdb-committed.ts`). */
  readsFromCommits = 0;
  /**
   * What the attempt read before its first write and what it did to those
   * keys after, for {@link committedReads}, by the key's bytes as latin1
   * text: each key's first value read, and the last value written to it
   * (copies: a caller may reuse a buffer it wrote from, or change one it was
   * given); ranges cleared. A write reads first (a create: header, head,
   * settings) and then writes; what it reads after its first write is not
   * recorded, so a write to a key not read needs no bookkeeping.
   */
  private readonly reads = new Map<string, Buffer | undefined>();
  private readonly writes = new Map<string, Buffer | undefined>();
  private readonly cleared: [Buffer, Buffer][] = [];
  /** Keys changed by an atomic operation: their value at the commit is not known here. */
  private readonly added = new Set<string>();
  /**
   * Reading from the process's last commits: the keys asked for before the
   * choice of a commit, the choice once made (undefined before), and the
   * commit chosen (undefined: none, the cluster's read version).
   */
  private asked: string[] | undefined;
  private choice: Promise<void> | undefined;
  private chosen: CommittedReads | undefined;
  /** The attempt has read from the cluster at a version it gave: no commit can be chosen. */
  private readFromCluster = false;

  /** The process's last commits: to record this attempt's in, to tell them the cluster answered, and (`readFrom`) to read from. */
  private readonly commits: CommittedValues | undefined;
  /** Whether this attempt may read from them (a write's first attempt, `fdb.ts`). */
  private readonly readFrom: boolean;
  /** Whether the attempt keeps what it reads and writes, for its commit to be recorded ({@link committedReads}). */
  private readonly tracked: boolean;

  /** `commits`: the process's last commits, to record this attempt's in (`track`) and, with `readFrom`, to read from. */
  constructor(tn: FdbTransaction, prefix: Bytes, stamp: Promise<Bytes>, readOnly: boolean, commits?: { values: CommittedValues; readFrom: boolean }) {
    this.tn = tn;
    this.prefix = prefix;
    this.stamp = stamp;
    this.readOnly = readOnly;
    this.commits = commits?.values;
    this.tracked = commits !== undefined && !readOnly;
    this.readFrom = this.tracked && commits!.readFrom;
  }

  async get(key: Bytes): Promise<Bytes | undefined> {
    this.limits.beforeGet(key);
    const full = this.key(key);
    const id = full.toString('latin1');
    if (this.readFrom && this.choice === undefined && !this.readFromCluster) {
      // The first read: the reads asked for side by side with it (in this turn) choose the commit to read at.
      this.asked = [];
      this.choice = Promise.resolve().then(() => this.choose());
    }
    if (this.asked !== undefined) {
      this.asked.push(id);
      await this.choice;
    }
    let value: Bytes | undefined;
    if (this.chosen !== undefined && !this.wrote && this.chosen.values.has(id)) {
      // As a read at the commit's version, which is this attempt's: the key is a read conflict all the same.
      const recorded = this.chosen.values.get(id);
      value = recorded === undefined ? undefined : Buffer.from(recorded);
      this.tn.addReadConflictKey(full);
      this.readsFromCommits += 1;
    } else {
      if (this.choice === undefined) this.readFromCluster = true;
      value = await this.tn.get(full);
      this.commits?.answered();
    }
    if (this.tracked && !this.wrote && !this.reads.has(id)) this.reads.set(id, value === undefined ? undefined : Buffer.from(value));
    this.limits.afterGet(key, value);
    return value;
  }

  /** Chooses the commit whose reads this attempt reads at, from the keys asked for so far, and sets its read version. */
  private choose(): void {
    const asked = this.asked ?? [];
    this.asked = undefined;
    // A range read went to the cluster meanwhile: its version is the attempt's.
    if (this.readFromCluster || !this.open || this.commits === undefined || !this.commits.heardLately()) return;
    this.chosen = this.commits.choose(asked);
    if (this.chosen !== undefined) this.tn.setReadVersion(this.chosen.version);
  }

  /**
   * After the attempt committed: each key it read (without snapshot), with
   * its value at the commit (its own last write of the key, or none past a
   * range it cleared); and the keys it changed by atomic operations.
   */
  committedReads(): { values: Map<string, Buffer | undefined>; added: ReadonlySet<string> } {
    const values = new Map<string, Buffer | undefined>();
    for (const [id, read] of this.reads) {
      if (this.added.has(id)) continue;
      if (this.writes.has(id)) values.set(id, this.writes.get(id));
      else if (this.cleared.length > 0 && this.inCleared(Buffer.from(id, 'latin1'))) values.set(id, undefined);
      else values.set(id, read);
    }
    return { values, added: this.added };
  }

  private inCleared(key: Buffer): boolean {
    return this.cleared.some(([begin, end]) => Buffer.compare(key, begin) >= 0 && Buffer.compare(key, end) < 0);
  }

  async getRange(begin: Bytes, end: Bytes, options?: RangeOptions): Promise<KeyValue[]> {
    this.limits.beforeRange(begin, end);
    if (Buffer.compare(begin, end) >= 0) {
      this.limits.afterRange([]);
      return [];
    }
    return this.readRange(this.key(begin), this.key(end), options);
  }

  /** With the store's prefix in front, even the empty prefix has an end: it reads the whole store. */
  async getPrefix(prefix: Bytes, options?: RangeOptions): Promise<KeyValue[]> {
    this.limits.beforePrefix(prefix);
    const begin = this.key(prefix);
    return this.readRange(begin, prefixEnd(begin), options);
  }

  set(key: Bytes, value: Bytes): void {
    this.writable();
    this.limits.write(key, value);
    const full = this.key(key);
    this.tn.set(full, value);
    if (this.reads.size > 0) this.written(full.toString('latin1'), value);
  }

  clear(key: Bytes): void {
    this.writable();
    this.limits.clear(key);
    const full = this.key(key);
    this.tn.clear(full);
    if (this.reads.size > 0) this.written(full.toString('latin1'), undefined);
  }

  /** The last write of a key the attempt read (a copy; a clear kept as none). */
  private written(id: string, value: Buffer | undefined): void {
    if (this.reads.has(id)) this.writes.set(id, value === undefined ? undefined : Buffer.from(value));
  }

  /** A range cleared: a key written before now within it holds nothing (one read before now too: {@link committedReads}). */
  private clearedRange(begin: Buffer, end: Buffer): void {
    if (this.reads.size === 0) return;
    this.cleared.push([begin, end]);
    for (const id of this.writes.keys()) {
      const key = Buffer.from(id, 'latin1');
      if (Buffer.compare(key, begin) >= 0 && Buffer.compare(key, end) < 0) this.writes.set(id, undefined);
    }
  }

  /** FoundationDB's writes are blind already: a set reads nothing and adds no read conflict. */
  setBlind(key: Bytes, value: Bytes): void {
    this.set(key, value);
  }

  clearBlind(key: Bytes): void {
    this.clear(key);
  }

  /** Blind: a read would cost a round trip, and FoundationDB writes no page for an unchanged value. */
  setUnlessHeld(key: Bytes, value: Bytes): void {
    this.set(key, value);
  }

  clearRange(begin: Bytes, end: Bytes): void {
    this.writable();
    this.limits.clearRange(begin, end);
    // FDB reports an inverted range as an error at commit; the port treats it as empty.
    if (Buffer.compare(begin, end) >= 0) return;
    const from = this.key(begin);
    const to = this.key(end);
    this.tn.clearRange(from, to);
    this.clearedRange(from, to);
  }

  clearPrefix(prefix: Bytes): void {
    this.writable();
    this.limits.clearPrefix(prefix);
    const begin = this.key(prefix);
    const end = prefixEnd(begin);
    this.tn.clearRange(begin, end);
    this.clearedRange(begin, end);
  }

  add(key: Bytes, delta: number | bigint): void {
    this.writable();
    const operand = encodeCounter(delta);
    this.limits.write(key, operand);
    const full = this.key(key);
    this.tn.add(full, operand);
    if (this.tracked) this.added.add(full.toString('latin1'));
  }

  setStamped(prefix: Bytes, suffix: Bytes, value: Bytes): void {
    this.writable();
    this.limits.writeStamped(prefix, COMMIT_STAMP_BYTES, suffix, value);
    this.tn.setVersionstampedKeyBuf(this.key(prefix), suffix, value);
  }

  commitStamp(): Promise<Bytes> {
    return this.stamp;
  }

  stats(): TransactionStats {
    return this.limits.stats();
  }

  close(): void {
    this.open = false;
  }

  /** A read-only transaction refuses writes, as the port promises. */
  private writable(): void {
    if (this.readOnly) throw new StoreError('internal', 'A read-only transaction cannot write.');
    this.wrote = true;
  }

  addReadConflictKey(key: Bytes): void {
    this.tn.addReadConflictKey(this.key(key));
  }

  private async readRange(begin: Bytes, end: Bytes, options: RangeOptions = {}): Promise<KeyValue[]> {
    if (this.choice === undefined) this.readFromCluster = true;
    else await this.choice;
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : 0;
    const reader = options.snapshot === true ? this.tn.snapshot() : this.tn;
    const rows = await reader.getRangeAll(begin, end, { limit, reverse: options.reverse === true });
    this.commits?.answered();
    const found = rows.map(([key, value]) => ({ key: key.subarray(this.prefix.length), value }));
    this.limits.afterRange(found);
    return found;
  }

  /** Every operation passes its keys through here, so this is also where a finished attempt refuses them. */
  private key(key: Bytes): Bytes {
    if (!this.open) throw new StoreError('internal', 'The transaction is over; its body kept running after it ended.');
    return this.prefix.length === 0 ? key : Buffer.concat([this.prefix, key]);
  }
}
