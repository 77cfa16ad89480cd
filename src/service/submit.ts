/**
 * Submitting a write that the local queue may take: straight to the store
 * when it answers; to the queue when the store stays unavailable after its
 * retries, or when the write's task (or checkpoint) already has writes
 * waiting in the queue, so that each task's writes apply in the order they
 * were accepted. A client's retry of a write the queue holds gets the first
 * 202 from the queue; of one the queue has applied, the store's answer.
 *
 * @module
 */
import { checkpointOf, type QueueableCommand, type Queued } from '../domain/commands.js';
import { snapshot, type ServiceContext } from './context.js';
import { execute, type ResultOf } from './execute.js';
import { present } from './invariants.js';
import { isOutage } from './transactions.js';

export async function submit<C extends QueueableCommand>(ctx: ServiceContext, command: C): Promise<ResultOf<C['kind']> | Queued> {
  const queue = ctx.queue;
  if (queue === undefined) return execute(ctx, command);
  const { tenant } = command.actor;
  const checkpointId = checkpointOf(command);
  let taskId = command.kind === 'checkpoint.create' ? command.taskId : queue.taskOf(tenant, checkpointId);
  if (queue.depth > 0) {
    // Writes wait: find this one's task, so it queues behind its task's writes rather than overtaking them.
    taskId ??= await snapshot(ctx, tenant, (repo) => repo.checkpoints.taskOf(checkpointId)).catch(() => undefined);
    // A retried key whose first write the queue has applied is answered from the store's record of the key: it writes nothing, so it overtakes nothing.
    if (queue.holds(tenant, taskId, checkpointId) && !(command.idempotency === 'client' && queue.replayed(tenant, command.operationId))) return enqueue(ctx, command, taskId);
  }
  try {
    return await execute(ctx, command);
  } catch (error) {
    if (!isOutage(error)) throw error;
    return enqueue(ctx, command, taskId);
  }
}

async function enqueue(ctx: ServiceContext, command: QueueableCommand, taskId: string | undefined): Promise<Queued> {
  const queue = present(ctx.queue, 'only a service with a queue enqueues');
  const first = queue.depth === 0;
  const queued = await queue.enqueue(command, taskId, ctx.now().toISOString());
  const fields = { tenant: command.actor.tenant, taskId, checkpointId: queued.checkpointId, operationId: command.operationId, kind: command.kind };
  // One warning when writes start to wait, not one per write through an outage.
  if (first) ctx.log.warn(fields, 'the store is unavailable: writes are being queued');
  else ctx.log.info(fields, 'write queued');
  return queued;
}
