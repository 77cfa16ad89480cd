/**
 * Task heads: one small record per task that every write to the task reads
 * and writes, which serializes writes to one task and leaves others alone.
 *
 * @module
 */
import type { ChainTip } from '../../domain/audit.js';
import type { Lease } from '../../domain/leases.js';
import type { LegalHold, TaskPolicy } from '../../domain/retention.js';
import type { TaskState } from '../../domain/task-state.js';
import { readRecordShaped, writeRecord, type RecordShape } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';
import type { Codecs } from './codec.js';
import type { Keyspace } from './keyspace.js';

export interface TaskHead {
  taskId: string;
  /** The newest checkpoint created in the task. */
  latestId?: string;
  /** Its `createdAt`: the next checkpoint's must be later (absent on heads written before it was kept). */
  latestAt?: string;
  /** How many checkpoints the task has had; the last history sequence. */
  seq: number;
  /** The tip of the task's audit chain. */
  audit: ChainTip;
  createdAt: string;
  updatedAt: string;
  /** The state in the A2A / MCP Tasks vocabulary; absent on tasks written before states existed (working). */
  state?: TaskState;
  /** The newest lease epoch granted or fenced; every write carrying an older one is refused. */
  epoch?: number;
  /** The newest lease granted, while it is active (it may have run past its expiry unswept). */
  lease?: Lease;
  /** The handoff waiting for acknowledgment, if any. */
  openHandoff?: string;
  /** When recent recoveries were attempted, for the circuit breaker. */
  recoveries?: string[];
  /** Recoveries initiated and not yet completed, each with the checkpoint it started from: compaction keeps those. */
  openRecoveries?: { id: string; checkpointId: string }[];
  /** Set while the task is blocked, with why and since when. */
  blocked?: { at: string; reason: string };
  /** The task's own retention policy (`PUT /v1/tasks/:taskId/policy`). */
  policy?: TaskPolicy;
  /** Set while a legal hold applies: nothing of the task is purged, compacted or expired. */
  legalHold?: LegalHold;
  /** Set while a purge runs over several transactions: the task takes no other write until it ends. */
  purging?: { startedAt: string; by: string; purged: number };
  /** The W3C trace context of the task's last write: a recovery's span links to it. */
  traceparent?: string;
  /** When the policy's `expireAfter` lets the task go (its last write plus the duration), as noted in `texp`. */
  expiresAt?: string;
}

export class TaskRows {
  /** Tasks whose head this transaction read or wrote: how the head is stored, so that writing it needs no read again. */
  private readonly shapes = new Map<string, RecordShape>();

  constructor(
    private readonly tx: Transaction,
    private readonly ks: Keyspace,
    private readonly codecs: Codecs,
  ) {}

  /** The task's head, or undefined when the task has never been written. */
  async head(taskId: string): Promise<TaskHead | undefined> {
    const { value, shape } = await readRecordShaped<TaskHead>(this.tx, this.ks.tasks, [taskId], this.codecs.tasks);
    this.shapes.set(taskId, shape);
    return value;
  }

  /** Up to `limit` task ids after `after`, in id order. */
  async ids(after: string | undefined, limit: number): Promise<string[]> {
    if (this.ks.layout === 'task') {
      const list = this.ks.taskList;
      const rows = await this.tx.getRange(after === undefined ? list.range().begin : list.range(after).end, list.range().end, { limit });
      return rows.map((row) => list.unpack(row.key)[0] as string);
    }
    // The `spaces` layout lists the heads themselves (a head's chunks share its id: each counts once).
    const range = this.ks.tasks.range();
    const begin = after === undefined ? range.begin : this.ks.tasks.range(after).end;
    const ids: string[] = [];
    let from = begin;
    while (ids.length < limit) {
      const rows = await this.tx.getRange(from, range.end, { limit: limit - ids.length });
      if (rows.length === 0) return ids;
      for (const row of rows) {
        const id = this.ks.tasks.unpack(row.key)[0] as string;
        if (ids[ids.length - 1] !== id) ids.push(id);
      }
      from = this.ks.tasks.range(ids[ids.length - 1]!).end;
    }
    return ids;
  }

  async putHead(head: TaskHead): Promise<void> {
    const shape = this.shapes.get(head.taskId);
    this.shapes.set(head.taskId, await writeRecord(this.tx, this.ks.tasks, [head.taskId], head, this.codecs.tasks, shape));
    // A new task joins the list (the `task` layout keeps heads beside each task's rows, not in one range).
    if (this.ks.layout === 'task' && (shape === undefined ? !(await this.listed(head.taskId)) : shape === 'absent')) {
      this.tx.set(this.ks.taskList.pack(head.taskId), EMPTY);
    }
  }

  private async listed(taskId: string): Promise<boolean> {
    return (await this.tx.get(this.ks.taskList.pack(taskId))) !== undefined;
  }
}

const EMPTY = Buffer.alloc(0);
