/**
 * `setUnlessHeld` on LMDB: a key that already holds the value is not written
 * (the transaction commits nothing when that was its only write), so a flag
 * every create sets costs a lone create's commit no page once it is set; a
 * clear not yet durable is read as the key's absence, and the key is set.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb.js';
import type { FinishedTransaction } from '../../src/store/store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function open(finished: FinishedTransaction[]): LmdbStore {
  const dir = mkdtempSync(join(tmpdir(), 'baton-unless-held-'));
  dirs.push(dir);
  return LmdbStore.open({ path: dir, hooks: { onTransaction: (done) => finished.push(done) } });
}

const FLAG = Buffer.from('flag');
const EMPTY = Buffer.alloc(0);

it('commits nothing for a key that holds the value already, and writes it when absent or different', async () => {
  const finished: FinishedTransaction[] = [];
  const store = open(finished);
  try {
    const committed = async (write: Parameters<LmdbStore['transact']>[0]) => {
      finished.length = 0;
      await store.transact(write);
      return finished.at(-1)?.committed;
    };
    expect(await committed(async (tx) => tx.setUnlessHeld(FLAG, EMPTY))).toBe(true);
    expect(await committed(async (tx) => tx.setUnlessHeld(FLAG, EMPTY))).toBe(false);
    expect(await committed(async (tx) => tx.setUnlessHeld(FLAG, Buffer.from('x')))).toBe(true);
    expect(await committed(async (tx) => tx.setUnlessHeld(FLAG, Buffer.from('x')))).toBe(false);
    expect(await committed(async (tx) => tx.clear(FLAG))).toBe(true);
    expect(await committed(async (tx) => tx.setUnlessHeld(FLAG, EMPTY))).toBe(true);
    expect((await store.transact((tx) => tx.get(FLAG), { readOnly: true }))?.length).toBe(0);
  } finally {
    await store.close();
  }
});

it('reads a clear whose commit is still under way as the key absent, and sets it', async () => {
  const store = open([]);
  try {
    await store.transact(async (tx) => tx.set(FLAG, EMPTY));
    for (let round = 0; round < 20; round++) {
      // Started together: the second body runs while the first one's commit is on its way to disk.
      await Promise.all([store.transact(async (tx) => tx.clear(FLAG)), store.transact(async (tx) => tx.setUnlessHeld(FLAG, EMPTY))]);
      expect((await store.transact((tx) => tx.get(FLAG), { readOnly: true }))?.length).toBe(0);
    }
  } finally {
    await store.close();
  }
});
