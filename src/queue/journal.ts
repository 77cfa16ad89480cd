/**
 * The write queue's file: an append-only log of records, each
 * `[length: u32 BE][checksum: 8 bytes][payload: length bytes of JSON]`, where
 * the checksum is the first 8 bytes of the payload's SHA-256. An append is
 * acknowledged only once fsynced; appends that arrive together share one
 * fsync. A crash can leave a torn record at the end: opening the journal
 * reads records until the first that is short or fails its checksum, and cuts
 * the file there, so a partial record is never replayed and every record that
 * was acknowledged is kept. With encryption at rest the payload is sealed
 * ({@link RecordCipher}) and the checksum covers the sealed bytes. An append whose write or fsync fails is refused
 * and its bytes are cut at once (or, while they cannot be, further appends are
 * refused too), so a failed append never costs a later acknowledged one. Which records are done is kept in a second small
 * file (`applied`), the count of records applied from the start, written
 * atomically (temp file, fsync, rename); when every record is done and no
 * append is in flight the log is emptied. The journal keeps both counts
 * itself, so the count it writes always numbers records of the log as it is
 * on disk, whatever appends were in flight when records were marked applied.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { lockDirectory, type DirectoryLock } from '../fs/dir-lock.js';

const HEADER_BYTES = 12;
/** No single queued write is larger than this; a longer length field means a torn or damaged header. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

function checksum(payload: Buffer): Buffer {
  return createHash('sha256').update(payload).digest().subarray(0, 8);
}

/** Seals each record's payload (encryption at rest) and opens it again; the queue passes one when a key file is set. */
export interface RecordCipher {
  seal(value: unknown, payload: Buffer): Buffer;
  /** The plain payload; throws when the record's key is missing, which must stop the start rather than cut the log. */
  open(payload: Buffer): Buffer;
}

export function encodeRecord(value: unknown, cipher?: RecordCipher): Buffer {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  const payload = cipher === undefined ? json : cipher.seal(value, json);
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32BE(payload.length, 0);
  checksum(payload).copy(header, 4);
  return Buffer.concat([header, payload]);
}

/** The whole records at the start of `bytes`, and where the first torn or damaged one begins. */
export function decodeRecords(bytes: Buffer, cipher?: RecordCipher): { records: unknown[]; validBytes: number } {
  const records: unknown[] = [];
  let at = 0;
  while (at + HEADER_BYTES <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    if (length > MAX_RECORD_BYTES || at + HEADER_BYTES + length > bytes.length) break;
    const payload = bytes.subarray(at + HEADER_BYTES, at + HEADER_BYTES + length);
    if (!checksum(payload).equals(bytes.subarray(at + 4, at + HEADER_BYTES))) break;
    // A record that does not open is not torn: its checksum held. The error stops the start and names the key.
    const plain = cipher === undefined ? payload : cipher.open(payload);
    let value: unknown;
    try {
      value = JSON.parse(plain.toString('utf8'));
    } catch {
      break;
    }
    records.push(value);
    at += HEADER_BYTES + length;
  }
  return { records, validBytes: at };
}

/** What the journal needs of its open log file: a `FileHandle` opened for appending is one. */
export interface LogFile {
  write(buffer: Buffer): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

export interface JournalOptions {
  /** Opens the log for appending; tests pass one that fails the way a full or failing disk does. */
  openLog?: (path: string) => Promise<LogFile>;
  cipher?: RecordCipher;
}

export class Journal {
  private handle: LogFile | undefined;
  private size: number;
  /** Whole records in the log, the applied ones included. */
  private records: number;
  /** Records applied, counted from the start of the log. */
  private applied: number;
  /** Appends waiting for the next fsync, with their callers. */
  private batch: { bytes: Buffer; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private flushing: Promise<void> | undefined;
  /** Bytes after `size` may be in the file: a batch failed and its bytes are not cut yet. */
  private torn = false;

  private constructor(
    private readonly logPath: string,
    private readonly appliedPath: string,
    size: number,
    records: number,
    applied: number,
    private readonly cipher: RecordCipher | undefined,
    private readonly lock: DirectoryLock,
  ) {
    this.size = size;
    this.records = records;
    this.applied = applied;
  }

  /**
   * Opens (or creates) the journal in `dir` and answers the records still to
   * apply, in order. A torn tail is cut before anything else happens.
   */
  static async open(dir: string, options: JournalOptions = {}): Promise<{ journal: Journal; pending: unknown[]; cut: number }> {
    // Before anything is read or cut: another process's appends and applied count must not be touched.
    const lock = await lockDirectory(dir, "The write queue's directory");
    try {
      const logPath = join(dir, 'queue.log');
      const appliedPath = join(dir, 'applied');
      const bytes = readOrEmpty(logPath);
      const { records, validBytes } = decodeRecords(bytes, options.cipher);
      const cut = bytes.length - validBytes;
      if (cut > 0) truncateDurably(logPath, validBytes);
      const applied = Math.min(readApplied(appliedPath), records.length);
      const journal = new Journal(logPath, appliedPath, validBytes, records.length, applied, options.cipher, lock);
      journal.handle = await (options.openLog ?? ((path: string) => open(path, 'a')))(logPath);
      return { journal, pending: records.slice(applied), cut };
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** Bytes in the log, applied records included until the log is emptied. */
  get bytes(): number {
    return this.size;
  }

  /** `value` as this journal writes it (sealed when it has a cipher), for a caller that needs its size before appending. */
  encode(value: unknown): Buffer {
    return encodeRecord(value, this.cipher);
  }

  /** Appends `value` and resolves once it is on disk. */
  append(value: unknown): Promise<void> {
    return this.appendEncoded(this.encode(value));
  }

  /** Appends a record already made by {@link encode} (a caller that needed its size first encodes once). */
  appendEncoded(bytes: Buffer): Promise<void> {
    if (bytes.length - HEADER_BYTES > MAX_RECORD_BYTES) return Promise.reject(new RangeError('The record is larger than the queue takes.'));
    return new Promise((resolve, reject) => {
      this.batch.push({ bytes, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /**
   * Writes every waiting append with one write and one fsync; appends made
   * meanwhile go in the next round. A batch whose write or fsync fails is
   * refused, and the log is cut back to its last whole record before
   * anything else is appended: bytes of a refused batch left in the file
   * would be cut on the next open together with every record after them,
   * acknowledged ones included (or, whole but refused, replayed).
   */
  private async flush(): Promise<void> {
    // Let appends made in the same turn join this batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.batch.length > 0) {
      const batch = this.batch;
      this.batch = [];
      const bytes = Buffer.concat(batch.map((entry) => entry.bytes));
      try {
        if (this.handle === undefined) throw new Error('The write queue is closed.');
        await this.repair(this.handle);
        this.torn = true;
        await writeAll(this.handle, bytes);
        await this.handle.datasync();
        this.torn = false;
        this.size += bytes.length;
        this.records += batch.length;
        for (const entry of batch) entry.resolve();
      } catch (error) {
        if (this.handle !== undefined) await this.repair(this.handle).catch(() => undefined);
        for (const entry of batch) entry.reject(error);
      }
    }
    this.flushing = undefined;
  }

  /** Cuts what a failed batch may have left after the last whole record; throws (refusing the next batch) while it cannot. */
  private async repair(handle: LogFile): Promise<void> {
    if (!this.torn) return;
    await handle.truncate(this.size);
    await handle.datasync();
    this.torn = false;
  }

  /**
   * Records that the next `count` records (after those already applied) are
   * applied; empties the log once every record in it is, unless an append is
   * in flight: its record lands after the applied ones and must survive.
   */
  markApplied(count: number): void {
    this.applied = Math.min(this.records, this.applied + count);
    if (this.applied === this.records && this.batch.length === 0 && this.flushing === undefined) {
      // Everything is applied. The count goes to 0 before the log is emptied: a crash between the two
      // replays records already applied, which their operation ids turn into no-ops; the other order
      // could skip records appended after the crash.
      writeAtomically(this.appliedPath, '0');
      truncateDurably(this.logPath, 0);
      this.size = 0;
      this.records = 0;
      this.applied = 0;
      this.torn = false;
      return;
    }
    writeAtomically(this.appliedPath, String(this.applied));
  }

  async close(): Promise<void> {
    await this.flushing;
    await this.handle?.close();
    this.handle = undefined;
    await this.lock.release();
  }
}

/** Writes all of `bytes`: a write may take fewer bytes than it was given, and the rest must follow. */
async function writeAll(handle: LogFile, bytes: Buffer): Promise<void> {
  for (let at = 0; at < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes.subarray(at));
    if (bytesWritten <= 0) throw new Error('The write queue could not write to its log.');
    at += bytesWritten;
  }
}

function readOrEmpty(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch {
    return Buffer.alloc(0);
  }
}

function readApplied(path: string): number {
  try {
    const value = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(value) && value >= 0 ? value : 0;
  } catch {
    return 0;
  }
}

function writeAtomically(path: string, text: string): void {
  const temp = `${path}.tmp`;
  const fd = openSync(temp, 'w');
  try {
    writeFileSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

function truncateDurably(path: string, length: number): void {
  const fd = openSync(path, 'r+');
  try {
    ftruncateSync(fd, length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
