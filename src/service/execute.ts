/**
 * Executing commands: the one entry of every write. Routes, and later the
 * write queue and its replays, hand a command to `execute`; it runs the
 * command's handler, which applies it inside the task transaction.
 *
 * @module
 */
import type { CheckpointCommand, Command, RecordCorruption } from '../domain/commands.js';
import { createCheckpoint, finalizeCheckpoint, linkCheckpoints, recordCorruption, updateCheckpoint, type WriteResult } from './checkpoint-writes.js';
import type { ServiceContext } from './context.js';

/** The `operation` label of `checkpoint_write_latency_ms` for each checkpoint command. */
const OPERATION: Record<CheckpointCommand['kind'], string> = {
  'checkpoint.create': 'create',
  'checkpoint.update': 'update',
  'checkpoint.finalize': 'finalize',
  'checkpoint.link': 'link',
};

/** Applies a command once; answers the checkpoint it wrote (or the first answer, on a repeat). */
export function execute(ctx: ServiceContext, command: CheckpointCommand): Promise<WriteResult>;
export function execute(ctx: ServiceContext, command: RecordCorruption): Promise<{ replayed: boolean }>;
export async function execute(ctx: ServiceContext, command: Command): Promise<WriteResult | { replayed: boolean }> {
  if (command.kind === 'checkpoint.corrupted') return recordCorruption(ctx, command);
  const started = performance.now();
  const result = await applyCheckpointCommand(ctx, command);
  ctx.metrics.checkpointWriteLatency.observe({ operation: OPERATION[command.kind] }, performance.now() - started);
  return result;
}

function applyCheckpointCommand(ctx: ServiceContext, command: CheckpointCommand): Promise<WriteResult> {
  switch (command.kind) {
    case 'checkpoint.create':
      return createCheckpoint(ctx, command);
    case 'checkpoint.update':
      return updateCheckpoint(ctx, command);
    case 'checkpoint.finalize':
      return finalizeCheckpoint(ctx, command);
    case 'checkpoint.link':
      return linkCheckpoints(ctx, command);
  }
}
