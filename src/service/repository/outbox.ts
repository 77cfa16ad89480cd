/**
 * The transactional outbox: CloudEvents under keys stamped at commit, so they
 * sort in commit order with no shared counter. An event's cursor is the hex
 * of its 12-byte tuple versionstamp (10 bytes of commit stamp, 2 of order).
 *
 * @module
 */
import type { CloudEvent } from '../../domain/events.js';
import { setStampedTuple } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';
import { decodeWith, type Codecs } from './codec.js';
import type { Keyspace } from './keyspace.js';

export interface OutboxRow {
  cursor: string;
  event: CloudEvent;
}

const AFTER = Buffer.from([0x00]);

/** The tenant's event clock: a little-endian count of the transactions that wrote events, plain (it tells only how many). */
export function clockKey(ks: Keyspace): Buffer {
  return ks.meta.pack('events-clock');
}

export class OutboxRows {
  constructor(
    private readonly tx: Transaction,
    private readonly ks: Keyspace,
    private readonly codecs: Codecs,
  ) {}

  /** Writes events in the given order; the stamp orders them against other commits. */
  append(events: readonly CloudEvent[]): void {
    // A stamped key is unknown until the commit: an event is bound to the tenant's event space instead.
    events.forEach((event, order) => setStampedTuple(this.tx, this.ks.events, order, [], this.codecs.events.encode(event, this.ks.events.prefix)));
  }

  /**
   * Moves the tenant's event clock on: one counter key, added to (never read)
   * by every transaction that writes events, so it never conflicts, and
   * watched by each instance's readers of the tenant's streams
   * ({@link clockKey}). Only where other processes write the same store.
   */
  tick(): void {
    this.tx.add(clockKey(this.ks), 1);
  }

  /** Up to `limit` events after `cursor` (exclusive; from the start when absent), oldest first. */
  async after(cursor: string | undefined, limit: number): Promise<OutboxRow[]> {
    const range = this.ks.events.range();
    const begin = cursor === undefined ? range.begin : Buffer.concat([this.stampKey(cursor), AFTER]);
    const rows = await this.tx.getRange(begin, range.end, { limit });
    return rows.map((row) => ({ cursor: this.cursorOf(row.key), event: decodeWith<CloudEvent>(this.codecs.events, row.value, this.ks.events.prefix) }));
  }

  /**
   * Removes up to `limit` of the oldest events written before `before` (ISO
   * 8601), stopping at the first newer one, and notes how far the trimming
   * has gone, so a reader resuming from an event no longer held is told.
   */
  async trim(before: string, limit: number): Promise<number> {
    const range = this.ks.events.range();
    const rows = await this.tx.getRange(range.begin, range.end, { limit });
    let trimmed = 0;
    let last: string | undefined;
    for (const row of rows) {
      if (decodeWith<CloudEvent>(this.codecs.events, row.value, this.ks.events.prefix).time >= before) break;
      this.tx.clear(row.key);
      last = this.cursorOf(row.key);
      trimmed += 1;
    }
    if (last !== undefined) this.tx.set(this.ks.meta.pack('events-trimmed'), this.codecs.meta.encode(last, this.ks.meta.pack('events-trimmed')));
    return trimmed;
  }

  /** The cursor of the newest event trimmed for retention, or undefined when none was. */
  async trimmedUpTo(): Promise<string | undefined> {
    const key = this.ks.meta.pack('events-trimmed');
    const value = await this.tx.get(key);
    return value === undefined ? undefined : decodeWith<string>(this.codecs.meta, value, key);
  }

  /** The cursor of the oldest event held, or undefined when there is none. */
  async oldest(): Promise<string | undefined> {
    const range = this.ks.events.range();
    const rows = await this.tx.getRange(range.begin, range.end, { limit: 1 });
    return rows.length === 0 ? undefined : this.cursorOf(rows[0]!.key);
  }

  /** The cursor of the newest event, or undefined when there is none. */
  async newest(): Promise<string | undefined> {
    const range = this.ks.events.range();
    const rows = await this.tx.getRange(range.begin, range.end, { limit: 1, reverse: true });
    return rows.length === 0 ? undefined : this.cursorOf(rows[0]!.key);
  }

  private stampKey(cursor: string): Buffer {
    return this.ks.events.pack({ type: 'versionstamp', value: Buffer.from(cursor, 'hex') } as never);
  }

  private cursorOf(key: Buffer): string {
    return (this.ks.events.unpack(key)[0] as unknown as { value: Buffer }).value.toString('hex');
  }
}
