/**
 * `LmdbStore.compact` on a live store: rows removed or replaced before it
 * (their keys and values carrying a unique word) leave no byte of that word
 * in `data.mdb`, neither in freed pages nor as a bound in a branch page;
 * every live row reads the same after it; a read begun before it finishes,
 * a write asked for during it lands after it, and the store reopens whole.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb.js';

const WORD = 'oldwordtapir';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Removed keys sit between live ones, as a checkpoint's plain index keys sit among others: some become branch pages' bounds. */
const key = (i: number) => Buffer.from(`row-${String(i).padStart(5, '0')}-${i % 2 === 0 ? 'live' : WORD}`);
const LIVE = { begin: Buffer.from('row-'), end: Buffer.from('row.') };

function holdsWord(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && readFileSync(join(entry.parentPath, entry.name)).includes(WORD))
    .map((entry) => entry.name);
}

it('rewrites data.mdb with the live rows only, while reads and writes go on', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-compact-'));
  dirs.push(dir);
  const store = LmdbStore.open({ path: dir });
  // Enough rows for branch pages, half of them keyed by the word, every one valued with it.
  await store.transact(async (tx) => {
    for (let i = 0; i < 3_000; i++) tx.set(key(i), Buffer.from(`${WORD} ${i}`));
  });
  await store.transact(async (tx) => {
    for (let i = 0; i < 3_000; i++) {
      if (i % 2 === 0) tx.set(key(i), Buffer.from(`sealed ${i}`));
      else tx.clear(key(i));
    }
  });
  expect(holdsWord(dir)).toEqual(['data.mdb']);

  let readDone = false;
  const read = store.transact(
    async (tx) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const rows = await tx.getRange(LIVE.begin, LIVE.end);
      readDone = true;
      return rows.length;
    },
    { readOnly: true },
  );
  const compacted = store.compact();
  const write = store.transact(async (tx) => tx.set(Buffer.from('after'), Buffer.from('written during')));
  expect(await compacted).toBe(true);
  expect(readDone).toBe(true);
  expect(await read).toBe(1_500);
  await write;

  expect(holdsWord(dir)).toEqual([]);
  const rows = await store.transact(async (tx) => tx.getRange(LIVE.begin, LIVE.end), { readOnly: true });
  expect(rows.map((row) => row.value.toString())).toEqual(Array.from({ length: 1_500 }, (_, n) => `sealed ${n * 2}`));
  await store.close();

  const reopened = LmdbStore.open({ path: dir });
  expect((await reopened.transact(async (tx) => tx.get(Buffer.from('after')), { readOnly: true }))?.toString()).toBe('written during');
  expect(await reopened.transact(async (tx) => (await tx.getRange(LIVE.begin, LIVE.end)).length, { readOnly: true })).toBe(1_500);
  await reopened.close();
});
