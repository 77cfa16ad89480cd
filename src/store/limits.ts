/**
 * Enforcing {@link STORE_LIMITS} the same way in every store: the checks a
 * write makes at once, and the per-attempt counters behind
 * `Transaction.stats()`. Both stores use this one file, so a key, a value or
 * a transaction refused by one is refused by the other with the same code.
 *
 * @module
 */
import { STORE_LIMITS, StoreError, type Bytes, type TransactionStats } from './store.js';

/** FoundationDB keeps keys from 0xff on for itself (2004 key_outside_legal_range without system access). */
const SYSTEM_BYTE = 0xff;
const SYSTEM_START = Buffer.from([SYSTEM_BYTE]);

export const LIMIT_MESSAGES = {
  key: 'A key is longer than the store allows (1,978 bytes).',
  value: 'A value is larger than the store allows (100,000 bytes).',
  transaction: 'A transaction wrote more than the store allows (10,000,000 bytes).',
  time: 'The transaction ran past the 5-second limit of one attempt.',
  system: 'Keys from 0xff on are reserved for FoundationDB itself.',
} as const;

/**
 * One attempt's counters and its first limit failure. A limit failure also
 * dooms the attempt: a body that catches the error still cannot commit, as
 * on FoundationDB, where the error is deferred to the commit.
 */
export class AttemptLimits {
  private readonly startedAt = performance.now();
  private keysRead = 0;
  private bytesRead = 0;
  private bytesWritten = 0;
  private failure: StoreError | undefined;

  stats(): TransactionStats {
    return { keysRead: this.keysRead, bytesRead: this.bytesRead, bytesWritten: this.bytesWritten, elapsedMs: performance.now() - this.startedAt };
  }

  /** Before a point read: the key is readable and the attempt still young. */
  beforeGet(key: Bytes): void {
    this.checkTime();
    if (key[0] === SYSTEM_BYTE) this.fail(new StoreError('internal', LIMIT_MESSAGES.system));
  }

  /** Before a range read over `[begin, end)`. */
  beforeRange(begin: Bytes, end: Bytes): void {
    this.checkTime();
    // The range may end at 0xff exactly (the end of the ordinary keys), not past it.
    if (begin[0] === SYSTEM_BYTE || Buffer.compare(end, SYSTEM_START) > 0) this.fail(new StoreError('internal', LIMIT_MESSAGES.system));
  }

  /** Before reading every key that starts with `prefix` (the empty prefix: every ordinary key). */
  beforePrefix(prefix: Bytes): void {
    this.checkTime();
    if (prefix[0] === SYSTEM_BYTE) this.fail(new StoreError('internal', LIMIT_MESSAGES.system));
  }

  afterGet(key: Bytes, value: Bytes | undefined): void {
    this.keysRead += 1;
    this.bytesRead += key.length + (value?.length ?? 0);
  }

  afterRange(rows: readonly { key: Bytes; value: Bytes }[]): void {
    this.keysRead += Math.max(1, rows.length);
    for (const row of rows) this.bytesRead += row.key.length + row.value.length;
  }

  /** A set, or an atomic add: the key and the value, and the key again for its conflict range. */
  write(key: Bytes, value: Bytes): void {
    this.checkKey(key);
    if (value.length > STORE_LIMITS.valueBytes) this.fail(new StoreError('too_large', LIMIT_MESSAGES.value));
    this.bytesWritten += 2 * key.length + value.length;
  }

  /** A key written with the commit stamp in it: the stamp counts as part of the key. */
  writeStamped(prefix: Bytes, stampBytes: number, suffix: Bytes, value: Bytes): void {
    const keyLength = prefix.length + stampBytes + suffix.length;
    if (keyLength > STORE_LIMITS.keyBytes) this.fail(new StoreError('too_large', LIMIT_MESSAGES.key));
    if (prefix[0] === SYSTEM_BYTE) this.fail(new StoreError('internal', LIMIT_MESSAGES.system));
    if (value.length > STORE_LIMITS.valueBytes) this.fail(new StoreError('too_large', LIMIT_MESSAGES.value));
    this.bytesWritten += 2 * keyLength + value.length;
  }

  clear(key: Bytes): void {
    this.checkKey(key);
    this.bytesWritten += 2 * key.length;
  }

  clearRange(begin: Bytes, end: Bytes): void {
    if (begin[0] === SYSTEM_BYTE || Buffer.compare(end, SYSTEM_START) > 0) this.fail(new StoreError('internal', LIMIT_MESSAGES.system));
    this.bytesWritten += 2 * (begin.length + end.length);
  }

  clearPrefix(prefix: Bytes): void {
    if (prefix[0] === SYSTEM_BYTE) this.fail(new StoreError('internal', LIMIT_MESSAGES.system));
    this.bytesWritten += 2 * (2 * prefix.length + 1);
  }

  /** Before commit: what a failed check deferred, then the size and the age of the whole attempt. */
  beforeCommit(): void {
    if (this.failure) throw this.failure;
    if (this.bytesWritten > STORE_LIMITS.transactionBytes) this.fail(new StoreError('too_large', LIMIT_MESSAGES.transaction));
    this.checkTime();
  }

  /** The deadline of this attempt, for a timer that stops a body waiting on something else. */
  deadline(overall: number): number {
    return Math.min(overall, Date.now() + STORE_LIMITS.transactionMs - (performance.now() - this.startedAt));
  }

  private checkKey(key: Bytes): void {
    if (key.length > STORE_LIMITS.keyBytes) this.fail(new StoreError('too_large', LIMIT_MESSAGES.key));
    if (key[0] === SYSTEM_BYTE) this.fail(new StoreError('internal', LIMIT_MESSAGES.system));
  }

  private checkTime(): void {
    if (this.failure) throw this.failure;
    if (performance.now() - this.startedAt > STORE_LIMITS.transactionMs) this.fail(new StoreError('timeout', LIMIT_MESSAGES.time));
  }

  private fail(error: StoreError): never {
    this.failure ??= error;
    throw error;
  }
}

/**
 * Settles with `work`, or rejects with `timeout` at `deadline` (epoch ms): a
 * body awaiting something other than the store would otherwise hold its
 * transaction (and on LMDB the single writer) for as long as it likes.
 */
export function withinDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) {
    // The body has started; its own rejection must not go unhandled.
    work.catch(() => undefined);
    return Promise.reject(new StoreError('timeout', TIMEOUT_MESSAGE));
  }
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreError('timeout', TIMEOUT_MESSAGE)), remaining);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

const TIMEOUT_MESSAGE = 'The transaction ran past its time limit.';
