import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb.js';

it('keeps its files inside BATON_DATA_DIR even when the directory name has a dot', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'baton-path-'));
  const dir = join(parent, 'baton.data');
  try {
    const store = LmdbStore.open({ path: dir });
    await store.transact(async (tx) => tx.set(Buffer.from('k'), Buffer.from('v')));
    await store.close();
    expect(existsSync(join(dir, 'data.mdb'))).toBe(true);
    const again = LmdbStore.open({ path: dir });
    expect((await again.transact((tx) => tx.get(Buffer.from('k'))))?.toString()).toBe('v');
    await again.close();
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});
