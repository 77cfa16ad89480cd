/**
 * The bytes the indexer and its merge thread (`merge-thread.ts`,
 * `merge-worker.ts`) pass each other: rows of keys and values, each tagged,
 * in one buffer that is transferred, not copied. A structured clone of an
 * array of Buffers would copy each one's whole pooled slab and make an
 * object per row on both sides; one buffer is one copy into it.
 *
 * A frame is rows of `[tag u8][key length u32][key][value length i32][value]`,
 * a value length of -1 standing for no value.
 *
 * @module
 */
import type { TaskMerge } from './merge-rows.js';

/** What a row is. To the thread: a pending entry, a task's open runs (absent: none). From it: a task's writes start, a set, a clear. */
export const ENTRY = 1;
export const OPEN_RUNS = 2;
export const TASK = 3;
export const SET = 4;
export const CLEAR = 5;

export interface FrameRow {
  tag: number;
  key: Buffer;
  value: Buffer | undefined;
}

export class FrameWriter {
  private readonly rows: FrameRow[] = [];
  private bytes = 0;

  add(tag: number, key: Uint8Array, value: Uint8Array | undefined): void {
    this.rows.push({ tag, key: key as Buffer, value: value as Buffer | undefined });
    this.bytes += 9 + key.length + (value?.length ?? 0);
  }

  /** The rows in one exactly sized buffer, to be transferred. */
  finish(): ArrayBuffer {
    const out = Buffer.from(new ArrayBuffer(this.bytes));
    let at = 0;
    for (const { tag, key, value } of this.rows) {
      out[at] = tag;
      out.writeUInt32LE(key.length, at + 1);
      out.set(key, at + 5);
      at += 5 + key.length;
      out.writeInt32LE(value === undefined ? -1 : value.length, at);
      at += 4;
      if (value !== undefined) {
        out.set(value, at);
        at += value.length;
      }
    }
    return out.buffer as ArrayBuffer;
  }
}

/** The rows of a frame, as views of it (no copies). */
export function readFrame(buffer: ArrayBuffer): FrameRow[] {
  const bytes = Buffer.from(buffer);
  const rows: FrameRow[] = [];
  let at = 0;
  while (at < bytes.length) {
    const tag = bytes[at]!;
    const keyLength = bytes.readUInt32LE(at + 1);
    const key = bytes.subarray(at + 5, at + 5 + keyLength);
    at += 5 + keyLength;
    const valueLength = bytes.readInt32LE(at);
    at += 4;
    let value: Buffer | undefined;
    if (valueLength >= 0) {
      value = bytes.subarray(at, at + valueLength);
      at += valueLength;
    }
    rows.push({ tag, key, value });
  }
  return rows;
}

/** Appends one task's merge: a TASK row naming the task, then a SET or CLEAR row a write. */
export function addTaskMerge(out: FrameWriter, { taskId, writes }: TaskMerge): void {
  out.add(TASK, Buffer.from(taskId, 'utf8'), undefined);
  for (const { key, value } of writes) out.add(value === null ? CLEAR : SET, key, value ?? undefined);
}

/**
 * The task merges {@link addTaskMerge} wrote into `rows`. Any other row goes
 * to `other`, with the task it follows (undefined before the first), which
 * throws for a row it does not take; without `other`, such a row throws.
 */
export function taskMerges(rows: readonly FrameRow[], other?: (row: FrameRow, task: TaskMerge | undefined) => void): TaskMerge[] {
  const merges: TaskMerge[] = [];
  let task: TaskMerge | undefined;
  for (const row of rows) {
    const { tag, key, value } = row;
    if (tag === TASK) merges.push((task = { taskId: key.toString('utf8'), writes: [] }));
    else if ((tag === SET || tag === CLEAR) && task !== undefined) task.writes.push({ key, value: tag === SET ? value! : null });
    else if (other !== undefined) other(row, task);
    else throw new Error(`A frame of task merges holds a row out of place (tag ${tag}).`);
  }
  return merges;
}
