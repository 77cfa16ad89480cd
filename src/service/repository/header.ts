/**
 * The per-tenant store header: `meta ("format")` → `{ format, codec }`,
 * written by the first write to a tenant, checked before this process first
 * writes to it. A store written by a newer format (a newer Baton) is refused
 * rather than misread. The header stays plain (it says how to read the
 * rest); beside it, with encryption at rest, `meta ("index-key")` holds the
 * tenant's blind-index key, sealed like any other value.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { MESSAGE_PACK, systemKeyspace, unknownLayout, type KeyLayout } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';
import type { Codecs } from './codec.js';
import type { Keyspace } from './keyspace.js';

/** Up to `limit` tenants that have written, after `after`, in name order. */
export async function tenants(tx: Transaction, after: string | undefined, limit: number): Promise<string[]> {
  const space = systemKeyspace().tenants;
  const begin = after === undefined ? space.range().begin : space.range(after).end;
  const rows = await tx.getRange(begin, space.range().end, { limit });
  return rows.map((row) => space.unpack(row.key)[0] as string);
}

/**
 * The format this version writes and reads. 2: checkpoint records may be
 * compressed (`compression.ts`). 3: the tenant's lease and task expiry
 * entries (`lexp`, `texp`) are bucketed (`expiry-buckets.ts`); an earlier
 * release neither finds them nor clears them when it renews a lease or
 * moves a task's expiry, and a stale task expiry entry is found due at
 * every sweep from then on. 4: a create's words wait in the full-text
 * pending list until the indexer merges them (`pending-terms.ts`); a
 * release that updates the runs inline would misplace them beside it. 5:
 * the pending list is kept in the order checkpoints are made (`pendingList`,
 * `tq`), not by task (`tp`): a release before it would find the entries
 * neither for search nor to merge them; what format 4 left in `tp` is listed
 * first, merged and cleared. 6: a run of a word that ends is ended under
 * its task (`runEnds`, `tc`), its key under the word left saying open; a
 * release before it would take such a run as reaching the task's newest
 * checkpoint. 7: a create writes only its `all` and `task` index entries;
 * the others wait in its pending entry, as tab-led lines after its words,
 * until the indexer merges them (`indexes.ts`); a release before it would
 * not find a new checkpoint by its agent, status or labels until then, and
 * would take those lines for words. 8: a task's open runs (`openTerms`,
 * `to`) are written a line per start with its words after it, positions
 * packed (`open-runs.ts`), so the row fits a page without an overflow page;
 * a release before it would read no open run there and start every word's
 * run afresh at the task's next merge. 9: a task's own rows (records, audit
 * entries, history, head) are under `("tk", taskId, tag)` (the `task` key
 * layout, `store/keyspace.ts`), in a store created since; a release before it
 * would find no task there. 10: a merge ends the runs of a checkpoint's
 * words a row for each start, `(taskId, startAt, startId, "")` the first
 * time runs of that start end and `(…, "", lastAt, lastId)` each later time
 * → the last position and the words (`terms.ts`, `endTogether`), not a key
 * for each word, and marks such a start's line in the open runs (`-`); a
 * release before it would take those runs as reaching the task's newest
 * checkpoint (as format 6 says of its ends), misread the marked lines, and
 * its re-blinding pass would leave their words plain. 11: checkpoint records
 * are compressed with zstd (method 2, `compression.ts`); a release before
 * it would read each such record as damaged. A tenant of a store that keeps the `spaces`
 * layout (created before format 9, `repository/key-layout.ts`) is written as format 8
 * wrote it and its header says 8, so a release of format 8 still serves it.
 * An earlier tenant is raised to the format its store's layout writes when
 * this version first writes to it, so an earlier release stops writing to
 * it; what that release wrote is still read (and its expiry entries cleared).
 */
export const STORE_FORMAT = 11;

/** The format a tenant's header says in a store of `layout`: 11 for the `task` layout, 8 for `spaces` (whose rows are as format 8 wrote them, records with DEFLATE). */
export function formatOf(layout: KeyLayout): number {
  return layout === 'task' ? STORE_FORMAT : 8;
}

export interface StoreHeader {
  format: number;
  /** How values are encoded (`codec.ts`). */
  codec: 'msgpack';
}

/** The header this version writes in a store of each layout, and its bytes as stored (the plain MessagePack of `meta` binds nothing to its key). */
const CURRENT = {
  task: current(formatOf('task')),
  spaces: current(formatOf('spaces')),
};

function current(format: number): { header: StoreHeader; bytes: Buffer } {
  const header: StoreHeader = Object.freeze({ format, codec: 'msgpack' });
  return { header, bytes: Buffer.from(MESSAGE_PACK.encode(header, Buffer.alloc(0))) };
}

export class HeaderRows {
  constructor(
    private readonly tx: Transaction,
    private readonly ks: Keyspace,
    private readonly tenant: string,
    private readonly codecs: Codecs,
  ) {}

  /** The header, written now when the tenant has none; undefined when the store's format is newer than this version's. */
  async ensure(): Promise<StoreHeader | undefined> {
    const key = this.ks.meta.pack('format');
    const value = await this.tx.get(key);
    if (this.ks.layout === 'unknown') throw unknownLayout();
    const written = CURRENT[this.ks.layout];
    // Every write reads the header: the current one, byte for byte, is not decoded again.
    if (value !== undefined && written.bytes.equals(value)) return written.header;
    if (value !== undefined) {
      const header = MESSAGE_PACK.decode(value, key) as StoreHeader;
      if (header.format > STORE_FORMAT) return undefined;
      if (header.format >= written.header.format) return header;
      // Every earlier format reads as this one: only what is written next differs.
      const raised: StoreHeader = { ...header, format: written.header.format };
      this.tx.set(key, MESSAGE_PACK.encode(raised, key));
      return raised;
    }
    const header: StoreHeader = { format: written.header.format, codec: 'msgpack' };
    this.tx.set(key, MESSAGE_PACK.encode(header, key));
    // The tenant joins the list the passes over every tenant's data walk.
    this.tx.set(systemKeyspace().tenants.pack(this.tenant), Buffer.alloc(0));
    return header;
  }

  /**
   * The tenant's blind-index key, made (32 random bytes) by the first call:
   * random rather than derived from a key of the key file, so rotating those
   * keys re-seals it like any value and never changes an index key.
   */
  async indexKey(): Promise<Buffer> {
    const key = this.ks.meta.pack('index-key');
    const value = await this.tx.get(key);
    if (value !== undefined) return Buffer.from(this.codecs.meta.decode(value, key) as Uint8Array);
    const made = randomBytes(32);
    this.tx.set(key, this.codecs.meta.encode(made, key));
    return made;
  }
}
