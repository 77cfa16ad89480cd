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

/**
 * Listed entries as each task's group, in the task's order, each within
 * {@link TASK_MERGE_BYTES}. The list holds a task's entries in its order but
 * not together (it is in the order checkpoints were made), so a group
 * gathers them wherever they are; groups come in the order of their tasks'
 * first entries.
 */
export function taskGroups<T extends { taskId: string }>(entries: readonly T[], bytesOf: (entry: T) => number): T[][] {
  const groups = new Map<string, T[]>();
  for (const entry of entries) {
    const group = groups.get(entry.taskId);
    if (group !== undefined) group.push(entry);
    else groups.set(entry.taskId, [entry]);
  }
  return [...groups.values()].map((group) => withinBytes(group, bytesOf, TASK_MERGE_BYTES));
}
