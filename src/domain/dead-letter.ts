/**
 * A queued write that could no longer apply when the store came back (its
 * checkpoint was finalized meanwhile, its If-Match went stale, its lease was
 * superseded, …): kept with the reason, announced, never dropped silently.
 *
 * @module
 */
import type { QueueableCommand } from './commands.js';

export interface DeadLetter {
  /** The write's operation id. */
  id: string;
  kind: QueueableCommand['kind'];
  checkpointId: string;
  taskId?: string;
  /** The write as it was accepted, so an operator can resubmit it by hand. */
  command: QueueableCommand;
  enqueuedAt: string;
  failedAt: string;
  /** Why it could not apply: the problem the write would have been answered with. */
  error: { code: string; status: number; detail?: string };
}
