/**
 * The write queue's journal on a real file: acknowledged appends survive a
 * reopen, a torn tail (the file cut at any offset, or garbage after it) is
 * cut and never replayed half, and the applied count survives a restart.
 * A file handle that fails as a full or failing disk does (a real handle
 * under a wrapper) shows that a failed append leaves nothing behind that
 * could cost a later, acknowledged one.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeRecords, encodeRecord, Journal, type LogFile } from '../../src/queue/journal.js';

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'baton-journal-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const record = (i: number) => ({ n: i, body: 'x'.repeat(i % 50), nested: { at: `2026-11-23T00:00:${String(i % 60).padStart(2, '0')}.000Z` } });

describe('journal', () => {
  it('keeps every acknowledged append across a reopen, in order, and the applied count', async () => {
    const d = dir();
    const { journal } = await Journal.open(d);
    await Promise.all(Array.from({ length: 50 }, (_, i) => journal.append(record(i))));
    journal.markApplied(20);
    await journal.close();
    const reopened = await Journal.open(d);
    expect(reopened.cut).toBe(0);
    expect(reopened.pending).toEqual(Array.from({ length: 30 }, (_, i) => record(i + 20)));
    reopened.journal.markApplied(30);
    await reopened.journal.close();
    const empty = await Journal.open(d);
    expect(empty.pending).toEqual([]);
    expect(readFileSync(join(d, 'queue.log')).length).toBe(0);
    await empty.journal.close();
  });

  it('counts records marked applied while an append is in flight, and empties the log only once none is', async () => {
    const d = dir();
    const { journal } = await Journal.open(d);
    for (let i = 0; i < 5; i++) await journal.append(record(i));
    const sixth = journal.append(record(5));
    // All five written records are applied, but the sixth is on its way into the log: it must stay.
    journal.markApplied(5);
    await sixth;
    const seventh = journal.append(record(6));
    journal.markApplied(1);
    await seventh;
    expect(readFileSync(join(d, 'applied'), 'utf8')).toBe('6');
    await journal.close();
    const reopened = await Journal.open(d);
    expect(reopened.pending).toEqual([record(6)]);
    reopened.journal.markApplied(1);
    expect(readFileSync(join(d, 'queue.log')).length).toBe(0);
    expect(readFileSync(join(d, 'applied'), 'utf8')).toBe('0');
    await reopened.journal.close();
  });

  it('cut at any offset: reopening answers exactly the whole records before the cut, never a partial one', async () => {
    const d = dir();
    const { journal } = await Journal.open(d);
    const written = Array.from({ length: 12 }, (_, i) => record(i * 7));
    for (const value of written) await journal.append(value);
    await journal.close();
    const full = readFileSync(join(d, 'queue.log'));
    const ends: number[] = [];
    for (let at = 0, i = 0; i < written.length; i++) ends.push((at += encodeRecord(written[i]).length));
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: full.length }), async (cut) => {
        writeFileSync(join(d, 'queue.log'), full);
        truncateSync(join(d, 'queue.log'), cut);
        writeFileSync(join(d, 'applied'), '0');
        const reopened = await Journal.open(d);
        const whole = ends.filter((end) => end <= cut).length;
        expect(reopened.pending).toEqual(written.slice(0, whole));
        // The torn tail is gone from the file itself: the next append follows the last whole record.
        expect(readFileSync(join(d, 'queue.log')).length).toBe(whole === 0 ? 0 : ends[whole - 1]);
        await reopened.journal.append({ after: true });
        await reopened.journal.close();
        expect(decodeRecords(readFileSync(join(d, 'queue.log'))).records).toEqual([...written.slice(0, whole), { after: true }]);
      }),
      { numRuns: 150 },
    );
  });

  it('a torn record after acknowledged ones loses none of them, whatever bytes the tear left', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }), fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.boolean(), async (count, garbage, prefix) => {
        const d = dir();
        const { journal } = await Journal.open(d);
        const acked = Array.from({ length: count }, (_, i) => record(i));
        for (const value of acked) await journal.append(value);
        await journal.close();
        // A crash mid-append leaves a prefix of the next record, or bytes that never were one.
        const next = encodeRecord(record(99));
        appendFileSync(join(d, 'queue.log'), prefix ? next.subarray(0, Math.min(garbage.length, next.length - 1)) : Buffer.from(garbage));
        // Neither a strict prefix of a record nor at most 64 random bytes is a whole record (its checksum
        // would have to match by chance, 1 in 2^64): exactly the acknowledged records come back.
        const reopened = await Journal.open(d);
        expect(reopened.pending).toEqual(acked);
        await reopened.journal.close();
      }),
      { numRuns: 100 },
    );
  });
});

/** Thrown as the file system throws it. */
function fsError(code: 'ENOSPC' | 'EIO'): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated`), { code });
}

/**
 * A real file handle whose next calls fail as told: `tear` writes part of
 * the bytes, then fails (a disk filling up mid-write); `sync` fails the
 * fdatasync after a whole write; `truncate` fails truncation until cleared;
 * `short` writes at most that many bytes per call without an error, as
 * write(2) may.
 */
class FailingLog implements LogFile {
  tear = false;
  sync = false;
  truncateFails = false;
  short: number | undefined;

  private constructor(private readonly real: FileHandle) {}

  static async open(path: string): Promise<FailingLog> {
    return new FailingLog(await open(path, 'a'));
  }

  async write(buffer: Buffer): Promise<{ bytesWritten: number; buffer: Buffer }> {
    if (this.tear) {
      this.tear = false;
      await this.real.write(buffer.subarray(0, Math.floor(buffer.length / 2)));
      throw fsError('ENOSPC');
    }
    const part = this.short === undefined ? buffer : buffer.subarray(0, this.short);
    const { bytesWritten } = await this.real.write(part);
    return { bytesWritten, buffer };
  }

  async datasync(): Promise<void> {
    if (this.sync) {
      this.sync = false;
      throw fsError('EIO');
    }
    return this.real.datasync();
  }

  async truncate(length: number): Promise<void> {
    if (this.truncateFails) throw fsError('EIO');
    return this.real.truncate(length);
  }

  close(): Promise<void> {
    return this.real.close();
  }
}

describe('journal on a failing disk', () => {
  async function withFailingLog(d: string): Promise<{ journal: Journal; log: FailingLog }> {
    let log: FailingLog | undefined;
    const { journal } = await Journal.open(d, { openLog: async (path) => (log = await FailingLog.open(path)) });
    return { journal, log: log! };
  }

  it('a write torn by a full disk costs no later append: the log goes back to its last whole record', async () => {
    const d = dir();
    const { journal, log } = await withFailingLog(d);
    await journal.append(record(1));
    log.tear = true;
    await expect(journal.append(record(2))).rejects.toMatchObject({ code: 'ENOSPC' });
    await journal.append(record(3));
    await journal.close();
    const reopened = await Journal.open(d);
    expect(reopened.cut).toBe(0);
    expect(reopened.pending).toEqual([record(1), record(3)]);
    await reopened.journal.close();
  });

  it('an append whose fdatasync failed is not kept: it was refused, so it must not be replayed', async () => {
    const d = dir();
    const { journal, log } = await withFailingLog(d);
    await journal.append(record(1));
    log.sync = true;
    await expect(journal.append(record(2))).rejects.toMatchObject({ code: 'EIO' });
    await journal.append(record(3));
    await journal.close();
    const reopened = await Journal.open(d);
    expect(reopened.pending).toEqual([record(1), record(3)]);
    await reopened.journal.close();
  });

  it('refuses appends while the torn tail cannot be cut, and takes them again once it can', async () => {
    const d = dir();
    const { journal, log } = await withFailingLog(d);
    await journal.append(record(1));
    log.tear = true;
    log.truncateFails = true;
    await expect(journal.append(record(2))).rejects.toMatchObject({ code: 'ENOSPC' });
    // Appending after the torn bytes would put this record where a reopen cuts: it is refused instead.
    await expect(journal.append(record(3))).rejects.toMatchObject({ code: 'EIO' });
    log.truncateFails = false;
    await journal.append(record(4));
    await journal.close();
    const reopened = await Journal.open(d);
    expect(reopened.pending).toEqual([record(1), record(4)]);
    await reopened.journal.close();
  });

  it('finishes a short write before it answers', async () => {
    const d = dir();
    const { journal, log } = await withFailingLog(d);
    log.short = 7;
    await Promise.all([journal.append(record(1)), journal.append(record(2))]);
    await journal.append(record(3));
    await journal.close();
    const reopened = await Journal.open(d);
    expect(reopened.pending).toEqual([record(1), record(2), record(3)]);
    await reopened.journal.close();
  });
});
