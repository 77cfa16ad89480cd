/**
 * The bounds of the full-text pending list (`repository/pending-terms.ts`).
 *
 * @module
 */

/**
 * The most checkpoints of one tenant a search reads from the pending list
 * beside the runs; past it a search scans an index instead (complete, and
 * slower). The indexer keeps the list well below it: creates wait for a
 * merge once this instance's unmerged creates pass half of it.
 */
export const PENDING_LIMIT = 2_000;

/** Entries one merge transaction takes at most. */
export const MERGE_BATCH = 256;

/**
 * The most bytes of entries one merge transaction takes (at least one
 * entry). An entry is its words, ~9 bytes each; merging it can end a run and
 * start one for every word (a key of ~90 bytes and its value each), and the
 * store counts a written key twice: up to ~45 times the entry's bytes. So a
 * batch stays under ~3 MB, inside a store transaction's 10,000,000 bytes
 * however long the checkpoints' texts are; an agent's ~1 KB entries make
 * batches of ~64.
 */
export const MERGE_BYTES = 64 * 1024;

/** The longest prefix of a batch within {@link MERGE_BYTES}, and never empty when the batch is not. */
export function withinMergeBytes<T>(batch: readonly T[], bytesOf: (item: T) => number): T[] {
  let bytes = 0;
  let count = 0;
  while (count < batch.length) {
    bytes += bytesOf(batch[count]!);
    if (count > 0 && bytes > MERGE_BYTES) break;
    count += 1;
  }
  return batch.slice(0, count);
}
