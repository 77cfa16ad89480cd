/**
 * Pending writes that arrive before their checkpoint. LangGraph queues the
 * `put` of a step's checkpoint behind the previous one and sends the step's
 * writes at once, so `putWrites` may name a checkpoint that is not written
 * yet. Savers with a separate writes table do not notice; here the writes
 * live inside their checkpoint, so they wait in this book and the `put`
 * takes them into the checkpoint it creates, in the same request.
 *
 * @module
 */
import type { StoredWrite } from './record.js';

/** One `putWrites` call waiting for its checkpoint. */
export interface EarlyWrites {
  entries: [key: string, write: StoredWrite, replace: boolean][];
  claimed: boolean;
  /** Settles when the `put` that claimed these writes has stored them, or failed. */
  done: Promise<void>;
  settle(error?: unknown): void;
}

export class EarlyWriteBook {
  private readonly waiting = new Map<string, EarlyWrites[]>();

  /** Registers writes for checkpoint `key` until a `put` claims them or they are withdrawn. */
  add(key: string, entries: EarlyWrites['entries']): EarlyWrites {
    let settle!: (error?: unknown) => void;
    const done = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    // Nobody may be waiting when a put fails after its writes were withdrawn; the failure is the put's to report.
    done.catch(() => undefined);
    const early: EarlyWrites = { entries, claimed: false, done, settle };
    const list = this.waiting.get(key) ?? [];
    list.push(early);
    this.waiting.set(key, list);
    return early;
  }

  /** Takes back writes no `put` has claimed; false when one already has. */
  withdraw(key: string, early: EarlyWrites): boolean {
    if (early.claimed) return false;
    const list = (this.waiting.get(key) ?? []).filter((e) => e !== early);
    if (list.length === 0) this.waiting.delete(key);
    else this.waiting.set(key, list);
    return true;
  }

  /** Every write waiting for checkpoint `key`, now the put's to store; merged as LangGraph's savers merge them. */
  claim(key: string): { claimed: EarlyWrites[]; writes: Record<string, StoredWrite> } {
    const claimed = this.waiting.get(key) ?? [];
    this.waiting.delete(key);
    const writes: Record<string, StoredWrite> = {};
    for (const early of claimed) {
      early.claimed = true;
      for (const [key, write, replace] of early.entries) if (replace || !(key in writes)) writes[key] = write;
    }
    return { claimed, writes };
  }
}
