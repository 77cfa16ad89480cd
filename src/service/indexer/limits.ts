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

/** The most bytes of entries one batch lists: ~256 of an agent's ~1 KB entries. */
export const MERGE_BYTES = 256 * 1024;

/**
 * The most bytes of one task's entries a batch merges (at least one entry;
 * the task's later entries wait for the next batch). An entry is its words,
 * ~9 bytes each; merging it can end a run and start one for every word (a
 * key of ~90 bytes and its value each), and the store counts a written key
 * twice: up to ~45 times the entry's bytes, ~3 MB here.
 */
export const TASK_MERGE_BYTES = 64 * 1024;

/**
 * The most bytes of writes (as the store counts them: each key twice) one
 * merge transaction applies; the tasks after it wait for the next batch. A
 * store transaction allows 10,000,000; a batch of agents' entries writes
 * ~2 MB.
 */
export const APPLY_BYTES = 4_000_000;

/** The longest prefix of `items` within `limit` bytes, and never empty when `items` is not. */
export function withinBytes<T>(items: readonly T[], bytesOf: (item: T) => number, limit = MERGE_BYTES): T[] {
  let bytes = 0;
  let count = 0;
  while (count < items.length) {
    bytes += bytesOf(items[count]!);
    if (count > 0 && bytes > limit) break;
    count += 1;
  }
  return items.slice(0, count);
}

/** Entries in key order as each task's group, in the task's order, each within {@link TASK_MERGE_BYTES}. */
export function taskGroups<T extends { taskId: string }>(entries: readonly T[], bytesOf: (entry: T) => number): T[][] {
  const groups: T[][] = [];
  for (const entry of entries) {
    const last = groups.at(-1);
    if (last !== undefined && last[0]!.taskId === entry.taskId) last.push(entry);
    else groups.push([entry]);
  }
  return groups.map((group) => withinBytes(group, bytesOf, TASK_MERGE_BYTES));
}
