/**
 * What one client (one agent) knows about its leases: the epoch it holds per
 * task, and which task each checkpoint it has seen belongs to, so that every
 * fenced write (create, patch, finalize, link, handoff) carries
 * `Baton-Lease-Epoch` without the caller passing it.
 *
 * An epoch is forgotten only when its lease is released. A lease that was
 * superseded or expired keeps its epoch on purpose: the agent's late writes
 * must keep carrying the old epoch and keep being refused with
 * `lease_superseded`, instead of going out without one and being accepted
 * while the task has no live lease.
 *
 * @module
 */
import type { Checkpoint, LeaseView } from './types.js';

/** How many checkpoint → task entries are kept; the oldest is dropped past it (a dropped one is looked up again). */
const MAX_CHECKPOINTS = 10_000;

export class LeaseBook {
  private readonly epochs = new Map<string, number>();
  private readonly taskOfCheckpoint = new Map<string, string>();

  /** The epoch this client holds for `taskId`, if any. */
  epoch(taskId: string): number | undefined {
    return this.epochs.get(taskId);
  }

  /** Whether this client holds an epoch for any task: only then is a checkpoint's task worth looking up. */
  holdsAny(): boolean {
    return this.epochs.size > 0;
  }

  /** The lease was granted or renewed to this client: its epoch fences the task's writes from now on. */
  hold(lease: Pick<LeaseView, 'taskId' | 'epoch'>): void {
    const held = this.epochs.get(lease.taskId);
    // An answer that arrives late (a slow renew of an older lease) must not lower the epoch.
    if (held === undefined || lease.epoch >= held) this.epochs.set(lease.taskId, lease.epoch);
  }

  /** The lease was released: writes to its task go without an epoch again, unless a newer lease is held. */
  release(lease: Pick<LeaseView, 'taskId' | 'epoch'>): void {
    const held = this.epochs.get(lease.taskId);
    if (held !== undefined && held <= lease.epoch) this.epochs.delete(lease.taskId);
  }

  /** Remembers the task of a checkpoint from an answer. */
  saw(checkpoint: Pick<Checkpoint, 'id' | 'taskId'> | null | undefined): void {
    if (!checkpoint) return;
    this.taskOfCheckpoint.delete(checkpoint.id);
    this.taskOfCheckpoint.set(checkpoint.id, checkpoint.taskId);
    if (this.taskOfCheckpoint.size > MAX_CHECKPOINTS) {
      const oldest = this.taskOfCheckpoint.keys().next().value;
      if (oldest !== undefined) this.taskOfCheckpoint.delete(oldest);
    }
  }

  taskOf(checkpointId: string): string | undefined {
    return this.taskOfCheckpoint.get(checkpointId);
  }

  /** The `Baton-Lease-Epoch` header for a write to `taskId`: empty when this client holds no lease on it. */
  headers(taskId: string | undefined): Record<string, string> {
    const epoch = taskId === undefined ? undefined : this.epochs.get(taskId);
    return epoch === undefined ? {} : { 'baton-lease-epoch': String(epoch) };
  }
}
