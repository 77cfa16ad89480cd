/**
 * What an LMDB failure means, as a {@link StoreError}: the one place the
 * embedded store reads lmdb-js's errors.
 *
 * A commit that fails reaches us as lmdb-js's "Commit failed" error, whose
 * `commitError` promise carries the cause; lmdb-js rejects that promise
 * with no handler of its own, so it is handled here, or the process would
 * end on an unhandled rejection. So do the promises of the puts inside a
 * batch, which the store drops (the batch's own promise carries the
 * outcome), and the promise of the batch lmdb-js opens of its own for each
 * event turn's writes, which nobody holds: `quietOrphanedCommits` treats
 * exactly those rejections, lmdb-js's "Commit failed" errors, as handled. A full file system shows up as ENOSPC, or
 * (lmdb-js's write path, seen on tmpfs) as EIO with the disk nearly full
 * (`fs/free-space.ts`): both are `no_space`, naming the directory, so the service answers 507 and
 * writes resume once there is room (`docs/reliability.md`).
 *
 * @module
 */
import { errorText, freeBytes, LOW_SPACE_BYTES, outOfSpace } from '../fs/free-space.js';
import { StoreError } from './store.js';

/**
 * The causes of a failed LMDB operation, `error` first and lmdb-js's
 * `commitError` after it when it tells one. lmdb-js rejects that promise in
 * the turn that reports the failure, but not always: when the writer thread
 * reports two failed transactions in one callback, the later one's promise
 * is made after the callback has rejected the first's, and nothing ever
 * settles it (lmdb-js's `rejectCommit`, seen on a full tmpfs: a large commit
 * refused and a small one handed over a turn later). So it is waited for one
 * turn of the event loop, no more: the commit's failure must never wait on it.
 */
export async function lmdbCauses(error: unknown): Promise<unknown[]> {
  const commitError = (error as { commitError?: unknown } | null)?.commitError;
  if (!(commitError instanceof Promise)) return [error];
  const cause: unknown = await Promise.race([
    commitError.then(
      () => undefined,
      (reason: unknown) => reason,
    ),
    new Promise<undefined>((resolve) => setImmediate(resolve, undefined)),
  ]);
  return cause === undefined ? [error] : [error, cause];
}

/**
 * The store error for a failed commit in the LMDB environment at `path`.
 * `earlier`: the failure of a commit before it that failed too, since the
 * store last wrote; a commit whose cause lmdb-js did not tell failed with it
 * in the same report of the writer thread, so it is answered as that one was.
 */
export async function commitFailure(error: unknown, path: string, earlier?: StoreError): Promise<StoreError> {
  if (error instanceof StoreError) return error;
  const causes = await lmdbCauses(error);
  if (earlier !== undefined && untold(causes)) return earlier;
  return classifyLmdbError(causes, path, freeBytes(path));
}

/** A failed commit whose cause lmdb-js did not tell (see {@link lmdbCauses}). */
function untold(causes: readonly unknown[]): boolean {
  return causes.length === 1 && /Commit failed/.test(errorText(causes[0]));
}

/**
 * The store error for causes of an LMDB failure (see {@link lmdbCauses}),
 * given the free bytes of the directory's file system (undefined when
 * unknown). Pure, so that every message lmdb-js is known to give is tested.
 */
export function classifyLmdbError(causes: readonly unknown[], path: string, free: number | undefined): StoreError {
  const text = causes.map(errorText).join(' ');
  const cause = causes[causes.length - 1];
  if (/MDB_MAP_FULL/.test(text)) {
    return new StoreError('no_space', `The LMDB map in ${path} is full; free space on its disk (lmdb-js grows the map as the file system allows) and retry.`, { cause, backendCode: 'MDB_MAP_FULL' });
  }
  if (/MDB_TXN_FULL/.test(text)) return new StoreError('too_large', 'The transaction is larger than LMDB allows.', { cause, backendCode: 'MDB_TXN_FULL' });
  if (/MDB_BAD_VALSIZE|key size/i.test(text)) return new StoreError('too_large', 'A key is larger than LMDB allows.', { cause });
  // A failed commit whose cause lmdb-js never told (above) on a disk nearly full is taken as what a failed commit there
  // mostly is, out of room, as an EIO there is: 507, and writes resume once there is room.
  const errno = outOfSpace(text, free) ?? (untold(causes) && free !== undefined && free < LOW_SPACE_BYTES ? 'EIO' : undefined);
  if (errno !== undefined) {
    return new StoreError('no_space', `The data directory ${path} has no room for the commit; free space on its file system and retry.`, { cause, backendCode: errno });
  }
  return new StoreError('unavailable', 'The LMDB commit failed.', { cause });
}

let quieted = false;

/**
 * Keeps lmdb-js's orphaned "Commit failed" rejections (see the module's
 * comment) from ending the process; every other unhandled rejection ends it
 * as Node's default does, unless another listener (a test runner) takes it.
 */
export function quietOrphanedCommits(): void {
  if (quieted) return;
  quieted = true;
  process.on('unhandledRejection', (reason: unknown) => {
    if (isCommitFailure(reason)) return;
    if (process.listenerCount('unhandledRejection') === 1) throw reason;
  });
}

/** lmdb-js's error for a write whose commit failed: its cause is in `commitError`. */
function isCommitFailure(reason: unknown): boolean {
  return reason instanceof Error && (reason as { commitError?: unknown }).commitError instanceof Promise;
}
