/**
 * What every part of the client shares: the transport and the lease book,
 * and the headers of a write: the fencing epoch, and `Baton-Task-Id`, the
 * write's task as a routing hint, so that a balancer in front of a fleet can
 * send each task's writes to one instance (`docs/fleet.md`, task affinity).
 * The service itself ignores the hint.
 *
 * @module
 */
import { BatonError } from './errors.js';
import type { LeaseBook } from './lease-book.js';
import { segment, type CallOptions, type Transport } from './transport.js';
import type { Checkpoint } from './types.js';

export class ClientCore {
  constructor(
    readonly transport: Transport,
    readonly book: LeaseBook,
  ) {}

  /** Reads a checkpoint (optionally an earlier version) and remembers its task. */
  async checkpoint(id: string, version: number | undefined, options?: CallOptions): Promise<Checkpoint> {
    const checkpoint = await this.transport.json<Checkpoint>({ method: 'GET', path: `/v1/checkpoints/${segment(id)}`, query: { version }, options });
    this.book.saw(checkpoint);
    return checkpoint;
  }

  /** The `Baton-Lease-Epoch` header for a write to a task, and its `Baton-Task-Id`. */
  fenceTask(taskId: string): Record<string, string> {
    return { ...this.book.headers(taskId), ...taskHint(taskId) };
  }

  /**
   * The `Baton-Lease-Epoch` header for a write to checkpoint `id`. When this
   * client holds a lease but has not seen the checkpoint, it reads it first
   * to learn its task: sending no epoch would be refused (428) while the
   * lease is live, and guessing one would defeat fencing.
   */
  async fenceCheckpoint(id: string, options?: CallOptions): Promise<Record<string, string>> {
    let taskId = this.book.taskOf(id);
    // Without a lease there is nothing to fence: the task is sent as a hint when it is known, never read for it.
    if (!this.book.holdsAny()) return taskId === undefined ? {} : taskHint(taskId);
    if (taskId === undefined) {
      try {
        taskId = (await this.checkpoint(id, undefined, options)).taskId;
      } catch (error) {
        // The write itself will get the service's answer (404, corrupt, …); the lookup adds nothing to it.
        if (error instanceof BatonError && error.status < 500) return {};
        throw error;
      }
    }
    return { ...this.book.headers(taskId), ...taskHint(taskId) };
  }
}

/** `Baton-Task-Id`, percent-encoded: a task id may hold any character but a control one, a header value only Latin-1. */
function taskHint(taskId: string): Record<string, string> {
  return { 'baton-task-id': encodeURIComponent(taskId) };
}
