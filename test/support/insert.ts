/**
 * Fixtures written straight through the repository: `insert` keeps each
 * task's newest checkpoint, as the task head does for the service, so a
 * test can write thousands in one transaction (`CheckpointRows.insert`
 * needs the one before). Each checkpoint's words are merged into the word
 * runs at once, as a caught-up indexer leaves them, unless the inserter is
 * told to leave them in the pending list. `mergePending` merges a tenant's
 * pending list as the indexer does.
 *
 * @module
 */
import type { Checkpoint } from '../../src/domain/checkpoint.js';
import { mergeBatch } from '../../src/service/indexer/indexer.js';
import { Repository, toStored, type IndexPosition } from '../../src/service/repository/repository.js';
import type { Store } from '../../src/store/store.js';

export class Inserter {
  private readonly newest = new Map<string, IndexPosition>();

  constructor(private readonly options: { merge: boolean } = { merge: true }) {}

  /** Writes `checkpoint` as entry `seq` of its task, after the task's newest written through this inserter. */
  async insert(repo: Repository, checkpoint: Checkpoint, seq: number): Promise<void> {
    const at = { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id };
    await repo.checkpoints.insert(checkpoint, toStored(checkpoint).stored, seq, this.newest.get(checkpoint.taskId));
    this.newest.set(checkpoint.taskId, at);
    if (!this.options.merge) return;
    const entry = await repo.terms.pending.get(checkpoint.taskId, at);
    if (entry !== undefined) await repo.terms.merge(checkpoint.taskId, [entry]);
  }
}

/** Merges the tenant's whole pending list into the word runs, batch by batch, as the indexer does; answers how many it merged. */
export async function mergePending(store: Store, tenant: string): Promise<number> {
  let merged = 0;
  for (;;) {
    const count = await store.transact((tx) => mergeBatch(new Repository(tx, tenant)));
    if (count === 0) return merged;
    merged += count;
  }
}
