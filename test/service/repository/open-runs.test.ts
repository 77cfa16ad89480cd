/**
 * A task's open runs are kept in memory by the bytes they were written as
 * (`OpenRunsCache` in `terms.ts`), so a create need not parse them again.
 * What is read is still what the store holds: an aborted write, or a row
 * changed behind the cache, reads as stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codecsFor } from '../../../src/service/repository/codec.js';
import { keyspaceOf } from '../../../src/service/repository/keyspace.js';
import { TermRows } from '../../../src/service/repository/terms.js';
import { LmdbStore } from '../../../src/store/lmdb.js';

const ks = keyspaceOf('tenant-open-runs');
const A = { createdAt: '2026-01-01T00:00:00.000Z', checkpointId: 'a' };
const B = { createdAt: '2026-01-01T00:00:01.000Z', checkpointId: 'b' };

let dir: string;
let store: LmdbStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'baton-open-runs-'));
  store = LmdbStore.open({ path: dir });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const rows = (tx: Parameters<Parameters<LmdbStore['transact']>[0]>[0]) => new TermRows(tx, ks, codecsFor(undefined), undefined, 'tenant-open-runs');
const read = () => store.transact(async (tx) => [...(await rows(tx).openRuns('task-1'))].map(([word, start]) => [word, start.checkpointId]), { readOnly: true });

describe('open runs', () => {
  it('read back what was written, not what an aborted transaction or a write behind the cache left in memory', async () => {
    await store.transact(async (tx) => rows(tx).writeOpenRuns('task-1', new Map([['lease', A], ['epoch', A]])));
    expect(await read()).toEqual([['lease', 'a'], ['epoch', 'a']]);

    await expect(
      store.transact(async (tx) => {
        rows(tx).writeOpenRuns('task-1', new Map([['sweeper', B]]));
        throw new Error('aborted');
      }),
    ).rejects.toThrow('aborted');
    expect(await read()).toEqual([['lease', 'a'], ['epoch', 'a']]);

    // The same text written by another path (as an earlier release would): equal bytes, same runs.
    await store.transact(async (tx) => tx.set(ks.openTerms.pack('task-1'), codecsFor(undefined).openTerms.encode(`@0 ${B.createdAt} b\nsweeper 0\n`, Buffer.alloc(0))));
    expect(await read()).toEqual([['sweeper', 'b']]);
  });

  it('are shared read-only: changing a copy of what was read leaves the next read alone', async () => {
    await store.transact(async (tx) => rows(tx).writeOpenRuns('task-1', new Map([['lease', A]])));
    await store.transact(async (tx) => {
      const copy = new Map(await rows(tx).openRuns('task-1'));
      copy.set('extra', B);
    });
    expect(await read()).toEqual([['lease', 'a']]);
  });
});
