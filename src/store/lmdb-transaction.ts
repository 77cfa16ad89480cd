/**
 * A transaction of the LMDB store: buffers its writes, and reads through its
 * own writes, then the writes of earlier transactions not yet durable, then
 * LMDB itself.
 *
 * @module
 */
import { AttemptLimits } from './limits.js';
import { COMMIT_STAMP_BYTES, decodeCounter, encodeCounter, prefixEnd, StoreError, type Bytes, type KeyValue, type RangeOptions, type Transaction, type TransactionStats } from './store.js';

/** What a transaction reads beneath its own writes. */
export interface PendingReader {
  pendingValue(keyId: string): Bytes | null | undefined;
  pendingRange(begin: Bytes, end: Bytes): Map<string, { key: Bytes; value: Bytes | null }>;
  committedValue(key: Bytes): Bytes | undefined;
  committedRange(begin: Bytes, end: Bytes, reverse: boolean): Iterable<{ key: Bytes; value: Bytes }>;
}

type Write = { key: Bytes; value: Bytes | null };

export class MemoryTransaction implements Transaction {
  private readonly below: PendingReader;
  private readonly writes = new Map<string, Write>();
  private readonly stamped: { prefix: Bytes; suffix: Bytes; value: Bytes }[] = [];
  /** Blind writes, in order: committed with the others, never read back (see `Transaction.setBlind`). */
  private readonly blind: Write[] = [];
  private open = true;
  /**
   * The commit stamp, made on demand: most transactions never ask for it, and
   * a read-only one would otherwise build a rejected promise and its error
   * (with a stack trace) for nothing.
   */
  private stamp: Promise<Bytes> | undefined;
  private stampResolve: ((stamp: Bytes) => void) | undefined;
  private stampReject: ((error: Error) => void) | undefined;
  /** The stamp once the transaction ended: `null` when it committed nothing, undefined before. */
  private settled: Bytes | null | undefined;

  private readonly readOnly: boolean;
  /** The port's limits and this attempt's counters, shared with the FoundationDB store. */
  readonly limits = new AttemptLimits();

  constructor(below: PendingReader, readOnly = false) {
    this.below = below;
    this.readOnly = readOnly;
  }

  async get(key: Bytes): Promise<Bytes | undefined> {
    this.checkOpen();
    this.limits.beforeGet(key);
    const value = this.read(key);
    this.limits.afterGet(key, value);
    return value;
  }

  async getRange(begin: Bytes, end: Bytes, options: RangeOptions = {}): Promise<KeyValue[]> {
    return this.countedRange(begin, end, options);
  }

  async getPrefix(prefix: Bytes, options?: RangeOptions): Promise<KeyValue[]> {
    this.checkOpen();
    this.limits.beforePrefix(prefix);
    return this.countedRange(prefix, prefixEnd(prefix), options ?? {});
  }

  set(key: Bytes, value: Bytes): void {
    this.checkWritable();
    this.limits.write(key, value);
    this.writes.set(key.toString('latin1'), { key, value });
  }

  clear(key: Bytes): void {
    this.checkWritable();
    this.limits.clear(key);
    this.writes.set(key.toString('latin1'), { key, value: null });
  }

  setBlind(key: Bytes, value: Bytes): void {
    this.checkWritable();
    this.limits.write(key, value);
    this.blind.push({ key, value });
  }

  clearBlind(key: Bytes): void {
    this.checkWritable();
    this.limits.clear(key);
    this.blind.push({ key, value: null });
  }

  /**
   * Read as `get` reads (this transaction's writes, then those not yet
   * durable, then LMDB), and set only when it differs. Bodies run one at a
   * time, so the value read is the value the key has when this commit
   * lands: a clear committed meanwhile is read as the key's absence.
   */
  setUnlessHeld(key: Bytes, value: Bytes): void {
    this.checkWritable();
    this.limits.beforeGet(key);
    const held = this.read(key);
    this.limits.afterGet(key, held);
    if (held !== undefined && Buffer.compare(held, value) === 0) return;
    this.set(key, value);
  }

  clearRange(begin: Bytes, end: Bytes): void {
    this.checkWritable();
    this.limits.clearRange(begin, end);
    this.clearKeys(begin, end);
  }

  /**
   * Bodies run one at a time, so the keys present now are exactly the keys
   * the range holds at commit: clearing them one by one is the same thing.
   * It is one mutation, counted once by the caller, as FoundationDB counts it.
   */
  private clearKeys(begin: Bytes, end: Bytes): void {
    for (const { key } of this.readRange(begin, end, {})) this.writes.set(key.toString('latin1'), { key, value: null });
    for (const write of this.writes.values()) {
      if (Buffer.compare(write.key, begin) >= 0 && Buffer.compare(write.key, end) < 0) write.value = null;
    }
  }

  clearPrefix(prefix: Bytes): void {
    this.checkWritable();
    this.limits.clearPrefix(prefix);
    this.clearKeys(prefix, prefixEnd(prefix));
  }

  add(key: Bytes, delta: number | bigint): void {
    this.checkWritable();
    // An atomic add reads nothing on FoundationDB: it counts as a write of its 8-byte operand, not as a read.
    const sum = encodeCounter(decodeCounter(this.read(key)) + BigInt(delta));
    this.limits.write(key, sum);
    this.writes.set(key.toString('latin1'), { key, value: sum });
  }

  setStamped(prefix: Bytes, suffix: Bytes, value: Bytes): void {
    this.checkWritable();
    this.limits.writeStamped(prefix, COMMIT_STAMP_BYTES, suffix, value);
    this.stamped.push({ prefix, suffix, value });
  }

  stats(): TransactionStats {
    return this.limits.stats();
  }

  commitStamp(): Promise<Bytes> {
    if (this.stamp === undefined) {
      const settled = this.settled;
      this.stamp =
        settled === undefined
          ? new Promise((resolve, reject) => {
              this.stampResolve = resolve;
              this.stampReject = reject;
            })
          : settled === null
            ? Promise.reject(noStamp())
            : Promise.resolve(settled);
      // A caller that asks for the stamp and awaits it only later must not see an unhandled rejection meanwhile.
      this.stamp.catch(() => undefined);
    }
    return this.stamp;
  }

  /** Ends the body: later calls of a body that outlived its transaction fail. */
  close(): void {
    this.open = false;
  }

  takeWrites(): { writes: Map<string, Write>; stamped: { prefix: Bytes; suffix: Bytes; value: Bytes }[]; blind: Write[] } {
    return { writes: this.writes, stamped: this.stamped, blind: this.blind };
  }

  resolveStamp(stamp: Bytes | null): void {
    this.settled = stamp;
    if (stamp === null) this.stampReject?.(noStamp());
    else this.stampResolve?.(stamp);
  }

  private checkOpen(): void {
    if (!this.open) throw new StoreError('internal', 'The transaction is over; its body kept running after it ended.');
  }

  private checkWritable(): void {
    this.checkOpen();
    if (this.readOnly) throw new StoreError('internal', 'A read-only transaction cannot write.');
  }

  private countedRange(begin: Bytes, end: Bytes, options: RangeOptions): KeyValue[] {
    this.checkOpen();
    this.limits.beforeRange(begin, end);
    const rows = this.readRange(begin, end, options);
    this.limits.afterRange(rows);
    return rows;
  }

  private read(key: Bytes): Bytes | undefined {
    this.checkOpen();
    const id = key.toString('latin1');
    const own = this.writes.get(id);
    if (own !== undefined) return own.value ?? undefined;
    const pending = this.below.pendingValue(id);
    if (pending !== undefined) return pending ?? undefined;
    return this.below.committedValue(key);
  }

  private readRange(begin: Bytes, end: Bytes, options: RangeOptions): KeyValue[] {
    this.checkOpen();
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    const reverse = options.reverse === true;
    if (Buffer.compare(begin, end) >= 0) return [];

    const overlay = this.below.pendingRange(begin, end);
    for (const [id, write] of this.writes) {
      if (Buffer.compare(write.key, begin) >= 0 && Buffer.compare(write.key, end) < 0) overlay.set(id, write);
    }
    const sign = reverse ? -1 : 1;
    const layered = [...overlay.values()].sort((a, b) => sign * Buffer.compare(a.key, b.key));

    const out: KeyValue[] = [];
    let next = 0;
    const emitLayeredBefore = (key: Bytes | null): void => {
      while (next < layered.length && out.length < limit) {
        const write = layered[next]!;
        if (key !== null && sign * Buffer.compare(write.key, key) >= 0) return;
        if (write.value !== null) out.push({ key: write.key, value: write.value });
        next++;
      }
    };
    for (const entry of this.below.committedRange(begin, end, reverse)) {
      emitLayeredBefore(entry.key);
      if (out.length >= limit) return out;
      const write = layered[next];
      if (write !== undefined && write.key.equals(entry.key)) {
        // The overlay's version of this key replaces the committed one.
        if (write.value !== null) out.push({ key: write.key, value: write.value });
        next++;
      } else {
        out.push(entry);
      }
      if (out.length >= limit) return out;
    }
    emitLayeredBefore(null);
    return out;
  }
}

function noStamp(): StoreError {
  return new StoreError('internal', 'A transaction that wrote nothing has no commit stamp.');
}
