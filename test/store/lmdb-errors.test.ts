/**
 * How the embedded store reads LMDB's failures (`src/store/lmdb-errors.ts`):
 * a full disk, reported by lmdb-js as ENOSPC or as EIO with the disk nearly
 * full, and a full map (`MDB_MAP_FULL`) are `no_space` naming the
 * directory; a commit failure's cause is read from lmdb-js's `commitError`
 * promise, which is handled so that it never ends the process. The real
 * full disk is in `test/http/robustness/full-disk.socket.test.ts`.
 */
import { expect, it } from 'vitest';
import { classifyLmdbError, commitFailure, lmdbCauses } from '../../src/store/lmdb-errors.js';
import { StoreError } from '../../src/store/store.js';
import { LOW_SPACE_BYTES } from '../../src/fs/free-space.js';

const DIR = '/var/lib/baton';

/** An error as lmdb-js raises it: message and numeric errno. */
function lmdbError(message: string, code?: number): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

it('reads ENOSPC as no_space naming the data directory, whatever the free space reads', () => {
  const error = classifyLmdbError([lmdbError('No space left on device: Attempting to write page at position 3194880, size 12288', 28)], DIR, undefined);
  expect(error).toMatchObject({ code: 'no_space', retriable: false, backendCode: 'ENOSPC' });
  expect(error.message).toContain(DIR);
});

it('reads EIO as no_space only while the disk is nearly full, and as unavailable otherwise', () => {
  const io = lmdbError('Input/output error', 5);
  expect(classifyLmdbError([io], DIR, 4096)).toMatchObject({ code: 'no_space', backendCode: 'EIO' });
  expect(classifyLmdbError([io], DIR, LOW_SPACE_BYTES * 4)).toMatchObject({ code: 'unavailable' });
  expect(classifyLmdbError([io], DIR, undefined)).toMatchObject({ code: 'unavailable' });
});

it('reads MDB_MAP_FULL as no_space naming the directory, and MDB_TXN_FULL as too_large', () => {
  const map = classifyLmdbError([lmdbError('MDB_MAP_FULL: Environment mapsize limit reached', -30792)], DIR, LOW_SPACE_BYTES * 4);
  expect(map).toMatchObject({ code: 'no_space', backendCode: 'MDB_MAP_FULL' });
  expect(map.message).toContain(DIR);
  expect(classifyLmdbError([lmdbError('MDB_TXN_FULL: Transaction has too many dirty pages', -30788)], DIR, undefined)).toMatchObject({ code: 'too_large' });
});

it('reads the cause of a failed commit from its commitError promise, handling it', async () => {
  const cause = lmdbError('No space left on device', 28);
  const commitError = Promise.reject(cause);
  const failed = Object.assign(new Error('Commit failed (see commitError for details)'), { commitError });
  expect(await lmdbCauses(failed)).toEqual([failed, cause]);
  expect(classifyLmdbError(await lmdbCauses(failed), DIR, undefined)).toMatchObject({ code: 'no_space' });
});

it('does not wait for a commitError promise lmdb-js never settles, and reads such a failure by the free space', async () => {
  // lmdb-js leaves the later of two failed commits reported in one callback with a promise nothing settles.
  const failed = Object.assign(new Error('Commit failed (see commitError for details)'), { commitError: new Promise(() => undefined) });
  const causes = await Promise.race([lmdbCauses(failed), new Promise((resolve) => setTimeout(resolve, 2_000, 'waiting'))]);
  expect(causes).toEqual([failed]);
  expect(classifyLmdbError([failed], DIR, 4096)).toMatchObject({ code: 'no_space', backendCode: 'EIO' });
  expect(classifyLmdbError([failed], DIR, LOW_SPACE_BYTES * 4)).toMatchObject({ code: 'unavailable' });
  expect(classifyLmdbError([failed], DIR, undefined)).toMatchObject({ code: 'unavailable' });
});

it('answers a failure whose cause was not told as the failure of the commit before it that failed with it', async () => {
  const untold = (): Error => Object.assign(new Error('Commit failed (see commitError for details)'), { commitError: new Promise(() => undefined) });
  const earlier = new StoreError('no_space', `The data directory ${DIR} has no room for the commit; free space on its file system and retry.`, { backendCode: 'EDQUOT' });
  // A quota leaves the disk roomy: without the earlier failure the untold one could only be read as a broken disk.
  expect(await commitFailure(untold(), DIR, earlier)).toBe(earlier);
  const told = Object.assign(new Error('Commit failed (see commitError for details)'), { commitError: Promise.reject(lmdbError('MDB_PANIC: fatal')) });
  expect(await commitFailure(told, DIR, earlier)).toMatchObject({ code: 'unavailable' });
});

it('answers any other failure as unavailable', () => {
  expect(classifyLmdbError([new Error('MDB_PANIC: Update of meta page failed or environment had fatal error')], DIR, undefined)).toMatchObject({ code: 'unavailable' });
});
