/**
 * Maintenance passes in progress, across tenants (`("baton-system", "mnt",
 * kind, tenant, taskId)` → the job), and tasks by the time their policy lets
 * them expire (`("baton-system", "texp", bucket, expiresAt, tenant,
 * taskId)`, spread over buckets by a hash of the tenant and task:
 * `expiry-buckets.ts`): what the maintenance runner finds without knowing
 * the tenants, and what lets a pass resume after a crash from the state the
 * store holds.
 *
 * @module
 */
import { MESSAGE_PACK, systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';
import { bucketOf, dueEntries } from './expiry-buckets.js';

const spaces = systemKeyspace();

/** Jobs name only tenants and tasks: they stay plain, and their codec binds nothing. */
const EMPTY = Buffer.alloc(0);

/** `purge`: a paged purge in progress; `compact`: a task past its policy's `keepLast`, for the sweeper to compact. */
export type JobKind = 'purge' | 'compact';

export interface Job {
  kind: JobKind;
  tenant: string;
  taskId: string;
  startedAt: string;
  /** Who asked: an admin's subject, or the retention sweeper. */
  by: string;
}

export class JobRows {
  constructor(
    private readonly tx: Transaction,
    private readonly tenant: string,
  ) {}

  put(job: Omit<Job, 'tenant'>): void {
    this.tx.set(spaces.maintenance.pack(job.kind, this.tenant, job.taskId), MESSAGE_PACK.encode({ ...job, tenant: this.tenant }, EMPTY));
  }

  done(kind: JobKind, taskId: string): void {
    this.tx.clear(spaces.maintenance.pack(kind, this.tenant, taskId));
  }

  /** Notes when the task may expire; `previous` (the entry made before) goes. */
  expiry(taskId: string, expiresAt: string | undefined, previous: string | undefined): void {
    if (previous === expiresAt) return;
    const bucket = bucketOf(`${this.tenant}\u0000${taskId}`);
    if (previous !== undefined) {
      this.tx.clear(spaces.taskExpiry.pack(bucket, previous, this.tenant, taskId));
      // An entry made before entries were bucketed is in the earlier layout.
      this.tx.clear(spaces.taskExpiry.pack(previous, this.tenant, taskId));
    }
    if (expiresAt !== undefined) this.tx.set(spaces.taskExpiry.pack(bucket, expiresAt, this.tenant, taskId), EMPTY);
  }
}

/** Up to `limit` jobs of any tenant, in key order. */
export async function pendingJobs(tx: Transaction, limit: number): Promise<Job[]> {
  const { begin, end } = spaces.maintenance.range();
  const rows = await tx.getRange(begin, end, { limit });
  return rows.map((row) => MESSAGE_PACK.decode(row.value, EMPTY) as Job);
}

/** Up to `limit` tasks of any tenant whose expiry is at or before `now`, oldest first. */
export async function expiredTasks(tx: Transaction, now: string, limit: number): Promise<{ expiresAt: string; tenant: string; taskId: string }[]> {
  const entries = await dueEntries(tx, spaces.taskExpiry, now, limit);
  return entries.map(({ parts }) => {
    const [expiresAt, tenant, taskId] = parts as [string, string, string];
    return { expiresAt, tenant, taskId };
  });
}
