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

/** Entries one merge transaction takes: a few hundred KB of words and runs, far inside a store transaction's limits. */
export const MERGE_BATCH = 256;
