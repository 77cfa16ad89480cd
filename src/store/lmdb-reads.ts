/**
 * Reading LMDB for the LMDB store: copies of values, ordered ranges, and a
 * reader over one snapshot for read-only transactions.
 *
 * @module
 */
import type { Database, Transaction as ReadTransaction } from 'lmdb';
import type { PendingReader } from './lmdb-transaction.js';
import type { Bytes } from './store.js';

/**
 * A copy of the value at `key`, optionally in an explicit read transaction
 * (an argument lmdb-js takes but its types leave out).
 */
export function readFast(data: Database<Buffer, Buffer>, key: Bytes, transaction?: ReadTransaction): Uint8Array | undefined {
  const getBinary = data.getBinary as (id: Buffer, options?: { transaction: ReadTransaction }) => Uint8Array | undefined;
  return getBinary.call(data, key, transaction ? { transaction } : undefined);
}

/** The copy as a Buffer, without copying again. */
export function copyOf(bytes: Uint8Array | undefined): Bytes | undefined {
  return bytes === undefined ? undefined : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** `[begin, end)` in key order (or reversed), copied out, optionally in one read transaction. */
export function* readRange(
  data: Database<Buffer, Buffer>,
  begin: Bytes,
  end: Bytes,
  reverse: boolean,
  transaction?: ReadTransaction,
): Iterable<{ key: Bytes; value: Bytes }> {
  const scope = transaction ? { transaction } : {};
  // lmdb-js walks a reverse range from `start` down to `end`; the bounds flip to keep [begin, end).
  const range = reverse
    ? data.getRange({ start: end, end: begin, reverse: true, exclusiveStart: true, inclusiveEnd: true, ...scope })
    : data.getRange({ start: begin, end, ...scope });
  for (const { key, value } of range) yield { key: Buffer.from(key), value: Buffer.from(value) };
}

/** Reads one LMDB snapshot, with no pending writes above it. */
export class SnapshotReader implements PendingReader {
  private readonly data: Database<Buffer, Buffer>;
  private readonly snapshot: ReadTransaction;

  constructor(data: Database<Buffer, Buffer>, snapshot: ReadTransaction) {
    this.data = data;
    this.snapshot = snapshot;
  }

  pendingValue(): undefined {
    return undefined;
  }

  pendingRange(): Map<string, { key: Bytes; value: Bytes | null }> {
    return new Map();
  }

  committedValue(key: Bytes): Bytes | undefined {
    return copyOf(readFast(this.data, key, this.snapshot));
  }

  committedRange(begin: Bytes, end: Bytes, reverse: boolean): Iterable<{ key: Bytes; value: Bytes }> {
    return readRange(this.data, begin, end, reverse, this.snapshot);
  }

}

/** The first index of `sorted` whose value is not below `id`. */
export function lowerBound(sorted: string[], id: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! < id) low = mid + 1;
    else high = mid;
  }
  return low;
}
