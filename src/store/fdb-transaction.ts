/**
 * One attempt's view of a FoundationDB transaction, in the store's own keys:
 * the store's prefix goes in front of every key, and {@link AttemptLimits}
 * checks and counts every operation exactly as the LMDB store does.
 *
 * @module
 */
import type { FdbTransaction } from './fdb-binding.js';
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

  constructor(tn: FdbTransaction, prefix: Bytes, stamp: Promise<Bytes>, readOnly: boolean) {
    this.tn = tn;
    this.prefix = prefix;
    this.stamp = stamp;
    this.readOnly = readOnly;
  }

  async get(key: Bytes): Promise<Bytes | undefined> {
    this.limits.beforeGet(key);
    const value = await this.tn.get(this.key(key));
    this.limits.afterGet(key, value);
    return value;
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
    this.tn.set(this.key(key), value);
  }

  clear(key: Bytes): void {
    this.writable();
    this.limits.clear(key);
    this.tn.clear(this.key(key));
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
    this.tn.clearRange(this.key(begin), this.key(end));
  }

  clearPrefix(prefix: Bytes): void {
    this.writable();
    this.limits.clearPrefix(prefix);
    const begin = this.key(prefix);
    this.tn.clearRange(begin, prefixEnd(begin));
  }

  add(key: Bytes, delta: number | bigint): void {
    this.writable();
    const operand = encodeCounter(delta);
    this.limits.write(key, operand);
    this.tn.add(this.key(key), operand);
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
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : 0;
    const reader = options.snapshot === true ? this.tn.snapshot() : this.tn;
    const rows = await reader.getRangeAll(begin, end, { limit, reverse: options.reverse === true });
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
