/**
 * The LMDB store's pending overlay: the newest write of each key whose commit
 * is handed to LMDB but not yet durable. Later bodies read through it, so
 * they see every earlier transaction before its fsync completes.
 *
 * @module
 */
import { lowerBound } from './lmdb-reads.js';
import type { Bytes } from './store.js';

/** A write in the overlay; `sequence`: the commit it belongs to, set when the commit joins the overlay. */
export type PendingWrite = { key: Bytes; value: Bytes | null; sequence?: bigint };

export class PendingOverlay {
  /**
   * The newest not-yet-durable write of each key. Range reads over it sort its
   * keys (latin1 strings compare as their bytes do) once and keep that order
   * until the next change: writes mostly do point reads, so it is rarely needed.
   */
  private readonly pending = new Map<string, PendingWrite>();
  private sortedKeys: string[] | undefined;
  /**
   * The newest commit whose writes a read has returned since {@link startReads}:
   * write bodies run one at a time, so it is the running body's. A commit
   * that lands after an earlier one failed is safe to keep only if its body
   * read nothing of the failed commit (`lmdb.ts`, `recover`).
   */
  private newestRead = 0n;

  /**
   * Adds commit `sequence`'s writes, keeping the transaction's own write
   * objects (a commit of a hundred index keys allocates nothing more here).
   */
  addAll(writes: Map<string, PendingWrite>, sequence: bigint): void {
    // forEach, not for-of: iterating a map's entries makes two objects an entry, and a merge's commit has thousands.
    writes.forEach((write, id) => {
      write.sequence = sequence;
      this.pending.set(id, write);
    });
    if (writes.size > 0) this.sortedKeys = undefined;
  }

  /** A write body starts: what it reads from the overlay is counted from here. */
  startReads(): void {
    this.newestRead = 0n;
  }

  /** The newest commit whose writes the body read since {@link startReads} (0 when none). */
  readsFrom(): bigint {
    return this.newestRead;
  }

  private noteRead(write: PendingWrite | undefined): void {
    if (write?.sequence !== undefined && write.sequence > this.newestRead) this.newestRead = write.sequence;
  }

  /** Forgets a commit's writes once durable, except the keys a later commit wrote again (another write object). */
  removeAll(writes: Map<string, PendingWrite>): void {
    writes.forEach((write, id) => {
      if (this.pending.get(id) === write) this.pending.delete(id);
    });
    if (writes.size > 0) this.sortedKeys = undefined;
  }

  /** The newest not-yet-durable write of `key`, if any: `null` means removed. */
  value(keyId: string): Bytes | null | undefined {
    const write = this.pending.get(keyId);
    this.noteRead(write);
    return write?.value;
  }

  /** Every not-yet-durable write inside `[begin, end)`, newest winning. */
  range(begin: Bytes, end: Bytes): Map<string, PendingWrite> {
    const found = new Map<string, PendingWrite>();
    if (this.pending.size === 0) return found;
    this.sortedKeys ??= [...this.pending.keys()].sort();
    const keys = this.sortedKeys;
    const endId = end.toString('latin1');
    for (let i = lowerBound(keys, begin.toString('latin1')); i < keys.length; i++) {
      const id = keys[i]!;
      if (id >= endId) break;
      const write = this.pending.get(id)!;
      this.noteRead(write);
      found.set(id, write);
    }
    return found;
  }
}
