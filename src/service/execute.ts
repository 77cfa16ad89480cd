/**
 * Executing commands: the one entry of every write. Routes and MCP tools
 * (through `submit` for the writes the local queue may take), the queue's
 * replayer and its dead letters, the lease sweeper and the integrity
 * recorder hand a command to `execute`; it runs the command's handler, which
 * applies it inside the task transaction. (Deleting expired operation
 * records is not a change of any task: the operation sweeper clears them in
 * its own bounded transactions.)
 *
 * @module
 */
import type { CheckpointCommand, Command } from '../domain/commands.js';
import { createCheckpoint, finalizeCheckpoint, linkCheckpoints, recordCorruption, updateCheckpoint } from './checkpoint-writes.js';
import type { ServiceContext } from './context.js';
import { recordDeadLetter } from './dead-letters.js';
import { acknowledgeHandoff, startHandoff } from './handoff.js';
import { acquireLease, expireLease, releaseLease, renewLease } from './leases.js';
import { completeRecovery, startRecovery, unblockTask } from './recovery.js';
import { purgePage, purgeTask } from './purge.js';
import { changeLegalHold, compactTask, setPolicy } from './retention.js';
import { setTaskState } from './tasks.js';

/** Each command's handler. */
const HANDLERS = {
  'checkpoint.create': createCheckpoint,
  'checkpoint.update': updateCheckpoint,
  'checkpoint.finalize': finalizeCheckpoint,
  'checkpoint.link': linkCheckpoints,
  'checkpoint.corrupted': recordCorruption,
  'lease.acquire': acquireLease,
  'lease.renew': renewLease,
  'lease.release': releaseLease,
  'lease.expire': expireLease,
  'handoff.start': startHandoff,
  'handoff.ack': acknowledgeHandoff,
  'recovery.start': startRecovery,
  'recovery.complete': completeRecovery,
  'task.unblock': unblockTask,
  'task.state': setTaskState,
  'task.purge': purgeTask,
  'task.purge_page': purgePage,
  'queue.dead_letter': recordDeadLetter,
  'task.policy': setPolicy,
  'task.hold': changeLegalHold,
  'task.compact': compactTask,
} as const satisfies { [K in Command['kind']]: (ctx: ServiceContext, command: Extract<Command, { kind: K }>) => Promise<unknown> };

type Handlers = typeof HANDLERS;
/** What `execute` answers for a command of kind `K`. */
export type ResultOf<K extends Command['kind']> = Awaited<ReturnType<Handlers[K]>>;

/** The `operation` label of `checkpoint_write_latency_ms` for each checkpoint command. */
const OPERATION: Record<CheckpointCommand['kind'], string> = {
  'checkpoint.create': 'create',
  'checkpoint.update': 'update',
  'checkpoint.finalize': 'finalize',
  'checkpoint.link': 'link',
};

/** Applies a command once, through its handler; answers what the handler answers (on a repeat, the first answer). */
export async function execute<C extends Command>(ctx: ServiceContext, command: C): Promise<ResultOf<C['kind']>> {
  const handler = HANDLERS[command.kind] as unknown as (ctx: ServiceContext, command: C) => Promise<ResultOf<C['kind']>>;
  if (!(command.kind in OPERATION)) return handler(ctx, command);
  const started = performance.now();
  const result = await handler(ctx, command);
  ctx.metrics.checkpointWriteLatency.observe({ operation: OPERATION[command.kind as CheckpointCommand['kind']] }, performance.now() - started);
  return result;
}
