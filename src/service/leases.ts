/**
 * Leases: acquire, renew, release, and expiry. A lease makes one agent the
 * task's writer until it expires; each grant raises the task's epoch, which
 * the task transaction checks on every write (fencing). A sweeper looks up
 * leases by expiry time and ends each one that ran out unrenewed, announcing
 * it once with LEASE_EXPIRED — the orchestrator's crash signal — also after a
 * restart, since the expiry index is stored. An expired lease's epoch is
 * outdated at once: its holder must take a new lease to write again.
 *
 * @module
 */
import type { AcquireLease, ExpireLease, ReleaseLease, RenewLease } from '../domain/commands.js';
import { ended, expiresAt, grant, isLive, type Lease, type LeaseStatus } from '../domain/leases.js';
import { AppError } from '../errors.js';
import { snapshot, type ServiceContext } from './context.js';
import { runInTask, type TaskWrite } from './task-transaction.js';
import { present } from './invariants.js';

export interface LeaseAnswer {
  lease: Lease;
  replayed: boolean;
}

/** Gives `agentId` the task's lease, one epoch above every earlier one; the previous lease ends. */
export async function grantLease(write: TaskWrite, leaseId: string, agentId: string, ttlMs: number): Promise<Lease> {
  const { repo, head, now } = write;
  await retire(write, 'superseded');
  const lease = grant({ epoch: head.epoch ?? 0 }, leaseId, head.taskId, agentId, ttlMs, now);
  await repo.leases.put(lease);
  repo.leaseExpiry.add(lease);
  head.lease = lease;
  head.epoch = lease.epoch;
  write.audit({ action: 'lease.acquired', agentId, details: { leaseId, epoch: lease.epoch, expiresAt: lease.expiresAt } });
  write.event({ type: 'LEASE_ACQUIRED', subject: leaseId, data: { leaseId, agentId, epoch: lease.epoch, expiresAt: lease.expiresAt } });
  return lease;
}

/**
 * Ends the task's active lease, if any: with `status`, or as expired (with
 * its LEASE_EXPIRED event) when its time had run out before anyone noticed.
 */
export async function retire(write: TaskWrite, status: Exclude<LeaseStatus, 'active'>): Promise<void> {
  const { repo, head, now } = write;
  const lease = head.lease;
  if (lease === undefined || lease.status !== 'active') return;
  const expired = status === 'expired' || lease.expiresAt <= now;
  const last = ended(lease, expired ? 'expired' : status, now);
  await repo.leases.put(last);
  repo.leaseExpiry.remove(lease);
  delete head.lease;
  // An expired holder is presumed dead: its epoch is outdated at once, so a late write cannot move the recovery point.
  if (expired) head.epoch = Math.max(head.epoch ?? 0, lease.epoch + 1);
  if (expired) announceExpiry(write, last);
  else write.audit({ action: `lease.${status}`, agentId: lease.agentId, details: { leaseId: lease.id, epoch: lease.epoch } });
}

function announceExpiry(write: TaskWrite, lease: Lease): void {
  write.audit({ action: 'lease.expired', agentId: lease.agentId, details: { leaseId: lease.id, epoch: lease.epoch, expiresAt: lease.expiresAt } });
  write.event({ type: 'LEASE_EXPIRED', subject: lease.id, data: { leaseId: lease.id, agentId: lease.agentId, epoch: lease.epoch, expiresAt: lease.expiresAt } });
}

/** POST /v1/tasks/:taskId/lease. The live holder asking again keeps its lease, renewed. */
export async function acquireLease(ctx: ServiceContext, command: AcquireLease): Promise<LeaseAnswer> {
  const { result, replayed } = await runInTask(ctx, command, command.taskId, async (write) => {
    const held = write.head.lease;
    if (isLive(held, write.now, ctx.clockSkewMs)) {
      if (held.agentId !== command.agentId) throw new AppError('lease_held', { extra: { agentId: held.agentId, expiresAt: held.expiresAt } });
      return extend(write, held, command.ttlMs);
    }
    return grantLease(write, command.leaseId, command.agentId, command.ttlMs);
  });
  return { lease: result, replayed };
}

/** POST /v1/leases/:id/renew: only the task's current, unexpired lease. */
export async function renewLease(ctx: ServiceContext, command: RenewLease): Promise<LeaseAnswer> {
  const taskId = await taskOfLease(ctx, command);
  const { result, replayed } = await runInTask(ctx, command, taskId, async (write) => extend(write, await current(write, command.leaseId), command.ttlMs));
  return { lease: result, replayed };
}

/** POST /v1/leases/:id/release. Releasing again, or after expiry, answers the lease as it is. */
export async function releaseLease(ctx: ServiceContext, command: ReleaseLease): Promise<LeaseAnswer> {
  const taskId = await taskOfLease(ctx, command);
  const { result, replayed } = await runInTask(ctx, command, taskId, async (write) => {
    const lease = present(await write.repo.leases.get(command.leaseId), 'a lease the task head names exists');
    if (lease.status === 'superseded' || lease.status === 'revoked') throw new AppError('lease_superseded', { extra: { epoch: write.head.epoch } });
    if (write.head.lease?.id !== lease.id) return lease;
    await retire(write, 'released');
    return present(await write.repo.leases.get(command.leaseId), 'a lease the task head names exists');
  });
  return { lease: result, replayed };
}

/** The sweeper's command: ends the lease if it is still the task's and its time is up; otherwise drops the stale entry. */
export async function expireLease(ctx: ServiceContext, command: ExpireLease): Promise<{ expired: boolean; replayed: boolean }> {
  const { result, replayed } = await runInTask(ctx, command, command.taskId, async (write) => {
    const lease = write.head.lease;
    const due = { id: command.leaseId, taskId: command.taskId, expiresAt: command.expiresAt };
    if (lease === undefined || lease.id !== command.leaseId || lease.expiresAt !== command.expiresAt || isLive(lease, write.now, ctx.clockSkewMs)) {
      write.repo.leaseExpiry.remove(due);
      return false;
    }
    await retire(write, 'expired');
    return true;
  });
  if (result && !replayed) ctx.metrics.leasesExpired.inc();
  return { expired: result, replayed };
}

async function taskOfLease(ctx: ServiceContext, command: { actor: { tenant: string }; leaseId: string }): Promise<string> {
  const lease = await snapshot(ctx, command.actor.tenant, (repo) => repo.leases.get(command.leaseId));
  if (lease === undefined) throw new AppError('not_found', { detail: 'No lease with this id exists.' });
  return lease.taskId;
}

/** The task's lease `leaseId` if it is current and unexpired; otherwise the refusal that says why not. */
async function current(write: TaskWrite, leaseId: string): Promise<Lease> {
  const held = write.head.lease;
  if (held?.id === leaseId && isLive(held, write.now)) return held;
  const lease = present(await write.repo.leases.get(leaseId), 'a lease the task head names exists');
  if (lease.status === 'released') throw new AppError('lease_released', { extra: { leaseId } });
  if (lease.status === 'expired' || (lease.status === 'active' && !isLive(lease, write.now))) throw new AppError('lease_expired', { extra: { leaseId } });
  throw new AppError('lease_superseded', { extra: { epoch: write.head.epoch } });
}

/** The same lease and epoch, expiring `ttlMs` from now (its own TTL when absent). */
async function extend(write: TaskWrite, lease: Lease, ttlMs: number | undefined): Promise<Lease> {
  const renewed: Lease = { ...lease, ttlMs: ttlMs ?? lease.ttlMs, expiresAt: expiresAt(write.now, ttlMs ?? lease.ttlMs) };
  write.repo.leaseExpiry.remove(lease);
  write.repo.leaseExpiry.add(renewed);
  await write.repo.leases.put(renewed);
  write.head.lease = renewed;
  write.audit({ action: 'lease.renewed', agentId: lease.agentId, details: { leaseId: lease.id, epoch: lease.epoch, expiresAt: renewed.expiresAt } });
  return renewed;
}
