/**
 * A session's history across its segments (record.ts): how many items it
 * holds, the patch that cuts it and adds to it, and reading it back from
 * the sealed segments (which never change, so each is read once per
 * process) and the head.
 *
 * @module
 */
import { BatonError, type BatonClient } from '../client/index.js';
import type { Checkpoint } from '../client/types.js';
import { itemKey, segmentItems, sessionOf, type SessionRecord, type StoredItem } from './record.js';

/** The session as one read saw it: its head (none before the first write) and the head's record. */
export interface View {
  head: Checkpoint | undefined;
  record: SessionRecord;
}

/** Sealed segments kept in memory. */
const CACHED_SEGMENTS = 1_000;

/** How many items the history holds: the counts of the sealed segments and the head's own. */
export function count(view: View): number {
  return view.record.prior.reduce((sum, [, n]) => sum + n, 0) + Object.keys(view.record.items ?? {}).length;
}

/**
 * The change that keeps the first `keep` items of the history and adds
 * `append` after them, as a patch of the head: items removed from the
 * head are set to null, earlier segments give up their last items by a
 * lower count in `prior`.
 */
export function splice(view: View, keep: number, append: StoredItem[]): Record<string, unknown> {
  const { record } = view;
  const keys = Object.keys(record.items ?? {}).sort();
  const items: Record<string, StoredItem | null> = {};
  const patch: Record<string, unknown> = { items };
  let remove = count(view) - keep;
  for (const key of keys.slice(Math.max(0, keys.length - remove))) items[key] = null;
  remove -= Math.min(remove, keys.length);
  if (remove > 0) {
    const prior = record.prior.map(([id, n]) => [id, n] as [string, number]);
    while (remove > 0) {
      const last = prior[prior.length - 1]!;
      const taken = Math.min(remove, last[1]);
      last[1] -= taken;
      remove -= taken;
      if (last[1] === 0) prior.pop();
    }
    patch.prior = prior;
  }
  let next = record.next;
  for (const item of append) items[itemKey(next++)] = item;
  patch.next = next;
  return patch;
}

export class SealedSegments {
  private readonly cache = new Map<string, StoredItem[]>();

  constructor(private readonly client: BatonClient) {}

  /** Every item of the history, oldest first. */
  async all(view: View): Promise<StoredItem[]> {
    const out: StoredItem[] = [];
    for (const [id, n] of view.record.prior) out.push(...(await this.items(id)).slice(0, n));
    out.push(...segmentItems(view.record));
    return out;
  }

  /** The last `limit` items, reading only the segments they are in. */
  async tail(view: View, limit: number): Promise<StoredItem[]> {
    const out = segmentItems(view.record).slice(-limit);
    for (let i = view.record.prior.length - 1; i >= 0 && out.length < limit; i--) {
      const [id, n] = view.record.prior[i]!;
      const items = (await this.items(id)).slice(0, n);
      out.unshift(...items.slice(Math.max(0, items.length - (limit - out.length))));
    }
    return out;
  }

  /** Keeps the items of a segment just sealed, so that reading it back costs nothing. */
  remember(id: string, items: StoredItem[]): void {
    this.cache.set(id, items);
    if (this.cache.size > CACHED_SEGMENTS) this.cache.delete(this.cache.keys().next().value!);
  }

  /** A sealed segment's items; one that compaction removed (410) holds none any more. */
  private async items(id: string): Promise<StoredItem[]> {
    const cached = this.cache.get(id);
    if (cached !== undefined) return cached;
    let items: StoredItem[];
    try {
      const record = sessionOf(await this.client.checkpoints.get(id));
      items = record === undefined ? [] : segmentItems(record);
    } catch (error) {
      if (!(error instanceof BatonError && error.code === 'checkpoint_compacted')) throw error;
      items = [];
    }
    this.remember(id, items);
    return items;
  }
}
