/**
 * Lineage: each child's one parent under `parents (childId)`, and each
 * parent's children under `links (parentId, childId)`, written together.
 *
 * @module
 */

import type { Transaction } from '../../store/store.js';
import { decodeWith, type Codecs } from './codec.js';
import type { Keyspace } from './keyspace.js';

const EMPTY = Buffer.alloc(0);

export class LinkRows {
  constructor(
    private readonly tx: Transaction,
    private readonly ks: Keyspace,
    private readonly codecs: Codecs,
  ) {}

  /** The parent of `childId`, or undefined when it has none. */
  async parentOf(childId: string): Promise<string | undefined> {
    const key = this.ks.parents.pack(childId);
    const value = await this.tx.get(key);
    return value === undefined ? undefined : decodeWith<string>(this.codecs.parents, value, key);
  }

  link(parentId: string, childId: string): void {
    const key = this.ks.parents.pack(childId);
    this.tx.set(key, this.codecs.parents.encode(parentId, key));
    this.tx.set(this.ks.links.pack(parentId, childId), EMPTY);
  }

  /** Up to `limit` children of `parentId`, in id order (UUIDv7: oldest first), after `afterChildId` when given. */
  async children(parentId: string, limit: number, afterChildId?: string): Promise<string[]> {
    const range = this.ks.links.range(parentId);
    const begin = afterChildId === undefined ? range.begin : this.ks.links.range(parentId, afterChildId).end;
    const rows = await this.tx.getRange(begin, range.end, { limit });
    return rows.map((row) => this.ks.links.unpack(row.key)[1] as string);
  }

  /** Removes `id` from the lineage: its parent row, its parent's link to it, and its links to its children. */
  async unlinkAll(id: string): Promise<void> {
    const parent = await this.parentOf(id);
    if (parent !== undefined) this.tx.clear(this.ks.links.pack(parent, id));
    this.tx.clear(this.ks.parents.pack(id));
    const children = this.ks.links.range(id);
    this.tx.clearRange(children.begin, children.end);
  }
}
