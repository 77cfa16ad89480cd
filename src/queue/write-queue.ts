/**
 * The durable local write queue (DESIGN §5). When the store cannot be
 * reached, a write command is validated as usual, appended to the journal and
 * fsynced, and answered 202 with the ids the client will see later; writes
 * to a task that has queued writes queue behind them, so each task's writes
 * apply in the order they were accepted. A replayer applies the queue, in
 * order, once the store answers again; each command's operation id is
 * recorded with its effect, so a replay after a crash applies it once. A
 * command that can no longer apply goes to the dead-letter list.
 *
 * Reads of a checkpoint with queued writes see them: the queue keeps, for
 * each checkpoint it touches, the commands still to apply, and lays them over
 * the stored version (or over the queued create).
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import { z } from 'zod';
import { ConfigError } from '../config.js';
import { errorText, freeBytes, FullDisk, outOfSpace } from '../fs/free-space.js';
import { applyQueueable, checkpointOf, queueableCommandSchema, type QueueableCommand, type Queued } from '../domain/commands.js';
import { AppError } from '../errors.js';
import { refused } from '../service/checkpoint-writes.js';
import type { QueuePort } from '../service/context.js';
import { Journal, type JournalOptions } from './journal.js';

/** One accepted write as the journal keeps it. */
export interface QueuedRecord {
  enqueuedAt: string;
  /** The task the write belongs to, when it was known on acceptance (always for a create). */
  taskId?: string;
  command: QueueableCommand;
}

export interface WriteQueueOptions {
  dir: string;
  /** The most bytes the journal may hold; a write past it is 503 queue_full. */
  maxBytes: number;
  journal?: JournalOptions;
}

/**
 * The journal's record as the queue reads it back: JSON (`journal.ts` frames
 * and checksums it) validated against the command schemas, so a record this
 * version cannot apply stops the start with one sentence instead of being
 * cast and half applied.
 */
const queuedRecordSchema = z.object({ enqueuedAt: z.string(), taskId: z.string().optional(), command: queueableCommandSchema });

function readQueued(value: unknown, index: number): QueuedRecord {
  const parsed = queuedRecordSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ConfigError(
    `The write queue's journal holds a write this version cannot apply (record ${index + 1}, ${issue?.path.join('.') || 'record'}: ${issue?.message ?? 'invalid'}); start the version that wrote it to drain the queue, or move BATON_QUEUE_DIR aside.`,
  );
}

/** Ids are scoped by tenant: one tenant's queued writes are invisible to another. */
function scoped(tenant: string, id: string): string {
  return `${tenant}\u0000${id}`;
}

export class WriteQueue implements QueuePort {
  private readonly pending: QueuedRecord[];
  private readonly tasks = new Map<string, number>();
  private readonly checkpoints = new Map<string, number>();
  /** Checkpoints known only to the queue: a queued create, with the task it belongs to. */
  private readonly taskOfQueued = new Map<string, string>();
  /** A write was refused as `queue_full` and nothing has left the queue since. */
  private refusedFull = false;
  /** Whether the journal's disk refused the last append for want of room. */
  readonly disk: FullDisk;

  private constructor(
    private readonly journal: Journal,
    pending: unknown[],
    private readonly maxBytes: number,
    /** The journal's directory, named when its disk is full. */
    readonly dir: string,
  ) {
    this.disk = new FullDisk(dir);
    this.pending = pending.map((record, index) => readQueued(record, index));
    for (const record of this.pending) this.count(record, +1);
  }

  static async open(options: WriteQueueOptions): Promise<{ queue: WriteQueue; cut: number }> {
    const { journal, pending, cut } = await Journal.open(options.dir, options.journal);
    try {
      return { queue: new WriteQueue(journal, pending, options.maxBytes, options.dir), cut };
    } catch (error) {
      await journal.close();
      throw error;
    }
  }

  get depth(): number {
    return this.pending.length;
  }

  /** When the oldest waiting write was accepted, or undefined when none waits. */
  get oldest(): string | undefined {
    return this.pending[0]?.enqueuedAt;
  }

  get bytes(): number {
    return this.journal.bytes;
  }

  /**
   * Whether a write sent now can be queued: the journal is under its byte
   * limit and has not refused a write as full since the replay last made
   * room, and its disk took the last append. Readiness reports it, so a load
   * balancer keeps sending writes to an instance whose store is down only
   * while they can be queued.
   */
  get accepting(): boolean {
    return !this.refusedFull && !this.disk.full && this.journal.bytes < this.maxBytes;
  }


  /** Whether writes to `taskId`, or to `checkpointId`, wait in the queue: a new one must queue behind them. */
  holds(tenant: string, taskId: string | undefined, checkpointId: string | undefined): boolean {
    return (taskId !== undefined && this.tasks.has(scoped(tenant, taskId))) || (checkpointId !== undefined && this.checkpoints.has(scoped(tenant, checkpointId)));
  }

  /** The task of a checkpoint created in the queue, for writes that name only the checkpoint. */
  taskOf(tenant: string, checkpointId: string): string | undefined {
    return this.taskOfQueued.get(scoped(tenant, checkpointId));
  }

  /** The next `count` writes to apply, oldest first. */
  head(count: number): QueuedRecord[] {
    return this.pending.slice(0, count);
  }

  /** The oldest `count` writes have been applied (or dead-lettered): they leave the queue for good. */
  done(count: number): void {
    const records = this.pending.splice(0, count);
    if (records.length === 0) return;
    for (const record of records) this.count(record, -1);
    this.refusedFull = false;
    // The journal counts applied records itself: only it knows whether an append in flight kept the log from emptying.
    this.journal.markApplied(records.length);
  }

  /** The key a replay orders a write by: its task when known, else its checkpoint. */
  orderKey(record: QueuedRecord): string {
    const { command } = record;
    const checkpointId = checkpointOf(command);
    const task = record.taskId ?? (command.kind === 'checkpoint.create' ? command.taskId : this.taskOfQueued.get(scoped(command.actor.tenant, checkpointId)));
    return scoped(command.actor.tenant, task !== undefined ? `task:${task}` : `checkpoint:${checkpointId}`);
  }

  /**
   * Accepts `command` for later: checks what can be checked without the
   * store (against the queued version when the checkpoint is the queue's
   * own), appends it, and answers once it is on disk.
   */
  async enqueue(command: QueueableCommand, taskId: string | undefined, now: string): Promise<Queued> {
    const answer = this.answer(command);
    const record: QueuedRecord = { enqueuedAt: now, ...(taskId !== undefined ? { taskId } : {}), command };
    const bytes = this.journal.encode(record);
    if (this.journal.bytes + bytes.length > this.maxBytes) {
      this.refusedFull = true;
      throw new AppError('queue_full');
    }
    try {
      await this.journal.appendEncoded(bytes);
      this.disk.wrote();
    } catch (error) {
      // Not on disk, so not accepted: the client tries again later (or elsewhere), as with the store itself down.
      if (outOfSpace(errorText(error), freeBytes(this.dir)) !== undefined) {
        this.disk.refused();
        throw new AppError('queue_disk_full', { detail: `The write queue's directory ${this.dir} has no room on its disk; free space there.`, cause: error });
      }
      throw new AppError('store_unavailable', { detail: 'The store is unavailable and the write queue could not write to its disk; the write was not accepted.', cause: error });
    }
    this.pending.push(record);
    this.count(record, +1);
    return answer;
  }

  /** The checkpoint with the writes queued for it laid over `base` (the stored version, or none for a queued create). */
  overlay(tenant: string, checkpointId: string, base: Checkpoint | undefined): Checkpoint | undefined {
    let current = base;
    for (const { command } of this.pending) {
      if (command.actor.tenant !== tenant || checkpointOf(command) !== checkpointId) continue;
      const next = applyQueueable(current, command);
      // A write that will not apply (it will be dead-lettered) leaves the view as it was.
      if (next.ok) current = next.next;
    }
    return current;
  }

  /** Whether writes to `checkpointId` wait in the queue. */
  touches(tenant: string, checkpointId: string): boolean {
    return this.checkpoints.has(scoped(tenant, checkpointId));
  }

  close(): Promise<void> {
    return this.journal.close();
  }

  private answer(command: QueueableCommand): Queued {
    const checkpointId = checkpointOf(command);
    const base: Queued = { queued: true, operationId: command.operationId, checkpointId };
    if (command.kind === 'handoff.start') base.handoffId = command.handoffId;
    const known = command.kind === 'checkpoint.create' ? undefined : this.overlay(command.actor.tenant, checkpointId, undefined);
    if (command.kind !== 'checkpoint.create' && known === undefined) {
      // The checkpoint is in the store: only If-Match tells the version this write will make.
      const ifMatch = 'ifMatch' in command ? command.ifMatch : undefined;
      return ifMatch === undefined ? base : { ...base, version: ifMatch + 1 };
    }
    const next = applyQueueable(known, command);
    if (!next.ok) throw refused(next.refusal, checkpointId);
    return { ...base, version: next.next.version, checkpoint: next.next };
  }

  private count(record: QueuedRecord, delta: 1 | -1): void {
    const { command } = record;
    const { tenant } = command.actor;
    const checkpointId = scoped(tenant, checkpointOf(command));
    const task = record.taskId ?? (command.kind === 'checkpoint.create' ? command.taskId : this.taskOfQueued.get(checkpointId));
    if (command.kind === 'checkpoint.create') {
      if (delta > 0) this.taskOfQueued.set(checkpointId, command.taskId);
      else this.taskOfQueued.delete(checkpointId);
    }
    bump(this.checkpoints, checkpointId, delta);
    if (task !== undefined) bump(this.tasks, scoped(tenant, task), delta);
  }
}

function bump(map: Map<string, number>, key: string, delta: number): void {
  const next = (map.get(key) ?? 0) + delta;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}
