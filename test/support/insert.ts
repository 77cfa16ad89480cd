/**
 * Fixtures written straight through the repository: `insert` keeps each
 * task's newest checkpoint, as the task head does for the service, so a
 * test can write thousands in one transaction (`CheckpointRows.insert`
 * needs the one before).
 *
 * @module
 */
import type { Checkpoint } from '../../src/domain/checkpoint.js';
import { toStored, type IndexPosition, type Repository } from '../../src/service/repository/repository.js';

export class Inserter {
  private readonly newest = new Map<string, IndexPosition>();

  /** Writes `checkpoint` as entry `seq` of its task, after the task's newest written through this inserter. */
  async insert(repo: Repository, checkpoint: Checkpoint, seq: number): Promise<void> {
    await repo.checkpoints.insert(checkpoint, toStored(checkpoint).stored, seq, this.newest.get(checkpoint.taskId));
    this.newest.set(checkpoint.taskId, { createdAt: checkpoint.createdAt, checkpointId: checkpoint.id });
  }
}
