/**
 * Reads that see queued writes: a checkpoint with writes waiting in the
 * local queue is answered as it will be once they apply — laid over its
 * stored version, or, for a checkpoint created while the store was
 * unavailable, made from the queue alone — and marked `queued`.
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import type { Actor } from '../domain/commands.js';
import { getCheckpoint } from './checkpoint-reads.js';
import type { ServiceContext } from './context.js';
import { CheckpointDoc, toStored } from './repository/repository.js';

export async function readCheckpoint(ctx: ServiceContext, actor: Actor, checkpointId: string, version?: number): Promise<{ doc: CheckpointDoc; queued: boolean }> {
  const queue = ctx.queue;
  if (queue === undefined || version !== undefined || !queue.touches(actor.tenant, checkpointId)) {
    return { doc: await getCheckpoint(ctx, actor, checkpointId, version), queued: false };
  }
  // A checkpoint the queue created has no stored version yet; any other is read from the store first.
  const base = queue.taskOf(actor.tenant, checkpointId) === undefined ? (await getCheckpoint(ctx, actor, checkpointId)).checkpoint : undefined;
  const view = queue.overlay(actor.tenant, checkpointId, base);
  if (view === undefined) return { doc: await getCheckpoint(ctx, actor, checkpointId), queued: false };
  return { doc: new CheckpointDoc(toStored(view).stored), queued: true };
}

/** A checkpoint as the queue will write it, in its stored form (canonical text and hash), for the 202 answer. */
export function queuedDoc(checkpoint: Checkpoint): CheckpointDoc {
  return new CheckpointDoc(toStored(checkpoint).stored);
}
