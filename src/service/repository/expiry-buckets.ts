/**
 * Time-ordered index entries spread over buckets. An index by time (an
 * operation's age, a lease's or a task's expiry) written as `(time, …)`
 * appends every new key at the end of one range, on FoundationDB one
 * storage server. Its keys are written `(bucket, time, …)` instead, the
 * bucket ({@link BUCKETS} of them) a hash of an id of the entry, so writes
 * spread over that many ranges; a sweep reads each bucket's due range.
 *
 * @module
 */
import type { KeyPart, Subspace } from '../../store/keyspace.js';
import type { Bytes, Transaction } from '../../store/store.js';

export const BUCKETS = 16;

/** FNV-1a: cheap, stable across processes and versions, which is all a bucket needs. */
export function bucketOf(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % BUCKETS;
}

/** A due entry: its key, and its parts after the bucket (the time first). */
export interface DueEntry {
  key: Bytes;
  parts: KeyPart[];
}

/**
 * Up to `limit` entries of `space` whose time (an ISO 8601 string, the first
 * part after the bucket) is at or before `due`, oldest first across the
 * buckets. Entries of the layout before buckets, `(time, …)`, are read too
 * (`docs/keyspace.md`): a string sorts before every integer in a tuple, so
 * they lie below bucket 0, apart from the buckets.
 */
export async function dueEntries(tx: Transaction, space: Subspace, due: string, limit: number): Promise<DueEntry[]> {
  const reads = Array.from({ length: BUCKETS }, async (_, bucket) => {
    const rows = await tx.getRange(space.range(bucket).begin, space.range(bucket, due).end, { limit });
    return rows.map((row) => ({ key: row.key, parts: space.unpack(row.key).slice(1) }));
  });
  const unbucketed = tx.getRange(space.range().begin, space.range(due).end, { limit });
  reads.push(unbucketed.then((rows) => rows.map((row) => ({ key: row.key, parts: space.unpack(row.key) }))));
  // Each range holds its oldest first: the oldest `limit` of them all are among the first `limit` of each.
  const entries = (await Promise.all(reads)).flat();
  entries.sort((a, b) => compareTimes(a.parts[0] as string, b.parts[0] as string) || Buffer.compare(a.key, b.key));
  return entries.slice(0, limit);
}

function compareTimes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
