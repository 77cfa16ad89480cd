/**
 * Space after a purge: LMDB reuses the pages freed by a purge for new
 * writes (the file grows far less the second time), and `npm run
 * store:compact` copies a store compacted, offline, into a smaller file that
 * opens and reads as the original, its companion environment (`runs/`, the
 * word runs the indexer's merges open) with it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb.js';

const root = new URL('../../', import.meta.url).pathname;
const VALUE = Buffer.alloc(3_000, 7);

async function fill(store: LmdbStore, prefix: string, count: number): Promise<void> {
  for (let batch = 0; batch < count; batch += 500) {
    await store.transact(async (tx) => {
      for (let i = batch; i < Math.min(count, batch + 500); i++) tx.set(Buffer.from(`${prefix}-${String(i).padStart(6, '0')}`), VALUE);
    });
  }
}

describe('space after a purge', () => {
  it('is reused by new writes, and a compacted copy is smaller and reads the same', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-space-'));
    const data = join(dir, 'data');
    const store = LmdbStore.open({ path: data });
    const size = (path: string) => statSync(join(path, 'data.mdb')).size;
    await fill(store, 'a', 5_000);
    const first = size(data);
    await store.transact(async (tx) => tx.clearRange(Buffer.from('a-'), Buffer.from('a.')));
    await fill(store, 'b', 5_000);
    const second = size(data);
    // The second load landed mostly in the pages the first one freed.
    expect(second - first).toBeLessThan(first / 4);
    await store.transact(async (tx) => tx.clearRange(Buffer.from('b-'), Buffer.from('b.')));
    await fill(store, 'c', 500);
    const runs = store.companion('runs');
    await runs.transact(async (tx) => tx.set(Buffer.from('run-1'), Buffer.from('open')));
    await store.close();

    const copy = join(dir, 'copy');
    const out = execFileSync(process.execPath, [join(root, 'scripts/compact-store.mjs'), data, copy], { encoding: 'utf8' });
    expect(out).toMatch(/^compacted /);
    expect(size(copy)).toBeLessThan(size(data) / 4);
    const reopened = LmdbStore.open({ path: copy });
    const rows = await reopened.transact(async (tx) => tx.getRange(Buffer.from('c-'), Buffer.from('c.')), { readOnly: true });
    expect(rows).toHaveLength(500);
    expect(rows.every((row) => Buffer.compare(row.value, VALUE) === 0)).toBe(true);
    const run = await reopened.companion('runs').transact(async (tx) => tx.get(Buffer.from('run-1')), { readOnly: true });
    expect(run?.toString()).toBe('open');
    expect(out).not.toMatch(/left in place: .*runs/);
    await reopened.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
