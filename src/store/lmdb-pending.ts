/**
 * The LMDB store's pending overlay: the newest write of each key whose commit
 * is handed to LMDB but not yet durable. Later bodies read through it, so
 * they see every earlier transaction before its fsync completes.
 *
 * @module
 */
import { lowerBound } from './lmdb-reads.js';
import type { Bytes } from './store.js';

export type PendingWrite = { key: Bytes; value: Bytes | null };

export class PendingOverlay {
  /**
   * The newest not-yet-durable write of each key. Range reads over it sort its
   * keys (latin1 strings compare as their bytes do) once and keep that order
   * until the next change: writes mostly do point reads, so it is rarely needed.
   */
  private readonly pending = new Map<string, PendingWrite>();
  private sortedKeys: string[] | undefined;

  /**
   * Adds a commit's writes, keeping the transaction's own write objects (a
   * commit of a hundred index keys allocates nothing more here).
   */
  addAll(writes: Map<string, PendingWrite>): void {
    for (const [id, write] of writes) this.pending.set(id, write);
    if (writes.size > 0) this.sortedKeys = undefined;
  }

  /** Forgets a commit's writes once durable, except the keys a later commit wrote again (another write object). */
  removeAll(writes: Map<string, PendingWrite>): void {
    for (const [id, write] of writes) if (this.pending.get(id) === write) this.pending.delete(id);
    if (writes.size > 0) this.sortedKeys = undefined;
  }

  /** The newest not-yet-durable write of `key`, if any: `null` means removed. */
  value(keyId: string): Bytes | null | undefined {
    return this.pending.get(keyId)?.value;
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
      found.set(id, this.pending.get(id)!);
    }
    return found;
  }
}
