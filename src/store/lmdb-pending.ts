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
  private readonly pending = new Map<string, PendingWrite & { sequence: bigint }>();
  private sortedKeys: string[] | undefined;

  add(id: string, key: Bytes, value: Bytes | null, sequence: bigint): void {
    if (!this.pending.has(id)) this.sortedKeys = undefined;
    this.pending.set(id, { key, value, sequence });
  }

  /** Forgets a pending write once durable, unless a later commit wrote the key again. */
  remove(id: string, sequence: bigint): void {
    if (this.pending.get(id)?.sequence !== sequence) return;
    this.pending.delete(id);
    this.sortedKeys = undefined;
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
