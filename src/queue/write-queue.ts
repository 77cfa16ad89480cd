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
 * A write sent again with its Idempotency-Key while the first is still in
 * the queue (a client that timed out before the 202 and retried) is answered
 * the first 202, with the ids it promised, and not queued twice: the second
 * copy would apply nothing on replay, so the ids its own 202 promised would
 * never exist.
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
import { present } from '../service/invariants.js';
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

/**
 * How many keys of applied client writes the queue remembers, for retries
 * that arrive after their write applied while its task still has writes
 * queued: a retry comes within seconds of its first attempt.
 */
const REPLAYED_KEYS = 10_000;

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
  /**
   * Writes with a client's Idempotency-Key in the queue, by tenant and
   * operation id: the request's fingerprint, and the 202 it was answered
   * (absent for writes read back from the journal at start: worked out again
   * when a retry asks).
   */
  private readonly keyed = new Map<string, { fingerprint: string; answer?: Promise<Queued> }>();
  /** The keys of client writes this queue has applied, the newest last, at most {@link REPLAYED_KEYS}. */
  private readonly replayedKeys = new Set<string>();
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
    for (const record of this.pending) {
      this.count(record, +1);
      const { command } = record;
      if (command.idempotency === 'client') this.keyed.set(scoped(command.actor.tenant, command.operationId), { fingerprint: command.fingerprint });
    }
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

  /**
   * Whether this queue applied the client's write under `operationId` (one of
   * the last {@link REPLAYED_KEYS}): a retry of it must not queue behind the
   * task's other writes, where it would be promised new ids that its replay,
   * finding the key used, would never create; the store answers it.
   */
  replayed(tenant: string, operationId: string): boolean {
    return this.replayedKeys.has(scoped(tenant, operationId));
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
    for (const record of records) {
      this.count(record, -1);
      if (record.command.idempotency !== 'client') continue;
      // Applied: a retry of its key is the store's to answer, from the key's record (`replayed`).
      const key = scoped(record.command.actor.tenant, record.command.operationId);
      this.keyed.delete(key);
      this.replayedKeys.add(key);
      if (this.replayedKeys.size > REPLAYED_KEYS) this.replayedKeys.delete(this.replayedKeys.values().next().value!);
    }
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
   * own), appends it, and answers once it is on disk. A retry of a client's
   * Idempotency-Key whose first write is still queued gets the first answer
   * (422 `idempotency_key_reused` with another request) and adds nothing.
   */
  async enqueue(command: QueueableCommand, taskId: string | undefined, now: string): Promise<Queued> {
    if (command.idempotency !== 'client') return this.append(command, taskId, now);
    const key = scoped(command.actor.tenant, command.operationId);
    const first = this.keyed.get(key);
    if (first !== undefined) {
      if (first.fingerprint !== command.fingerprint) throw new AppError('idempotency_key_reused');
      first.answer ??= Promise.resolve(this.answerAgain(key));
      return first.answer;
    }
    // Held from before the append, so that a retry arriving while it is on its way to disk waits for its answer.
    const answer = this.append(command, taskId, now);
    this.keyed.set(key, { fingerprint: command.fingerprint, answer });
    answer.catch(() => this.keyed.delete(key));
    return answer;
  }

  private async append(command: QueueableCommand, taskId: string | undefined, now: string): Promise<Queued> {
    const answer = this.answer(command, this.pending.length);
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

  /** The answer of a keyed write read back from the journal at start, worked out from the writes queued before it. */
  private answerAgain(key: string): Queued {
    const index = this.pending.findIndex(({ command }) => scoped(command.actor.tenant, command.operationId) === key);
    return this.answer(present(this.pending[index], 'a keyed write is in the queue until it is applied').command, index);
  }

  /** The checkpoint with the writes queued for it (the first `upTo` of them) laid over `base` (the stored version, or none for a queued create). */
  overlay(tenant: string, checkpointId: string, base: Checkpoint | undefined, upTo = this.pending.length): Checkpoint | undefined {
    let current = base;
    for (let i = 0; i < upTo; i++) {
      const { command } = this.pending[i]!;
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

  /** What the 202 of `command` says, queued after the first `upTo` writes. */
  private answer(command: QueueableCommand, upTo: number): Queued {
    const checkpointId = checkpointOf(command);
    const base: Queued = { queued: true, operationId: command.operationId, checkpointId };
    if (command.kind === 'handoff.start') base.handoffId = command.handoffId;
    const known = command.kind === 'checkpoint.create' ? undefined : this.overlay(command.actor.tenant, checkpointId, undefined, upTo);
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
