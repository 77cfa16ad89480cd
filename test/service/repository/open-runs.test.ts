/**
 * A task's open runs are kept in memory by the bytes they were written as
 * (`OpenRunsCache` in `terms.ts`), so a create need not parse them again.
 * What is read is still what the store holds: an aborted write, or a row
 * changed behind the cache, reads as stored. The row's text (`open-runs.ts`,
 * store format 8) gives back every word and start exactly, whatever form the
 * times and ids have, and a hundred words stay under LMDB's limit for a
 * value kept on its leaf; format 7's rows are still read. Format 10 marks
 * the starts some of whose runs have ended.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codecsFor } from '../../../src/service/repository/codec.js';
import { endedBefore, markedEnded, openRunsOf, openRunsText } from '../../../src/service/repository/open-runs.js';
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

describe('the open runs\' text', () => {
  it('gives back each word and its start exactly, times and ids in any form, starts shared by the words that share them', () => {
    const starts = [
      { createdAt: '2026-11-28T17:46:40.123Z', checkpointId: '01a22324-3ec9-72d2-a427-444640a243e4' },
      // Not in their usual form: an upper-case UUID, a time without milliseconds, ids that are no UUID.
      { createdAt: '2026-11-28T17:46:41Z', checkpointId: '01A22324-3EC9-72D2-A427-444640A243E4' },
      { createdAt: '1969-12-31T23:59:59.999Z', checkpointId: 'cp=7' },
      { createdAt: '+012026-01-01T00:00:00.000Z', checkpointId: 'b' },
    ];
    const runs = new Map([
      ['lease', starts[0]!],
      ['file:src/a%20b.ts', starts[1]!],
      ['~Zm9vYmFy', starts[0]!],
      ['sha256:00ff', starts[2]!],
      ['epoch', starts[3]!],
      ['sweeper', starts[1]!],
    ]);
    const read = openRunsOf(openRunsText(runs));
    expect([...read].sort()).toEqual([...runs].sort());
    // Runs that start together come back sharing one position.
    expect(read.get('lease')).toBe(read.get('~Zm9vYmFy'));
    expect(read.get('file:src/a%20b.ts')).toBe(read.get('sweeper'));
    expect(openRunsOf(openRunsText(new Map()))).toEqual(new Map());
  });

  it('writes one line a start, its words in the map’s order, whether they lie together in the map or apart', () => {
    const together = new Map([['lease', A], ['epoch', A], ['sweeper', B], ['replay', B]]);
    expect(openRunsText(together)).toBe(openRunsText(new Map([['lease', A], ['epoch', A], ['sweeper', B], ['replay', B]])));
    const apart = new Map([['lease', A], ['sweeper', B], ['epoch', A], ['replay', B]]);
    for (const runs of [together, apart]) {
      const lines = openRunsText(runs).split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(2);
      expect(lines.map((line) => line.split('\t')[1])).toEqual(['lease epoch', 'sweeper replay']);
      expect([...openRunsOf(openRunsText(runs))].sort()).toEqual([...runs].sort());
    }
  });

  it('keeps which starts have had some of their runs ended (format 10), first line or not, and leaves the position it was given alone', () => {
    const ended = markedEnded(A);
    expect(endedBefore(A)).toBe(false);
    expect(ended).toEqual(A);
    for (const runs of [
      new Map([['lease', ended], ['epoch', ended], ['sweeper', B]]),
      new Map([['sweeper', B], ['lease', ended], ['epoch', ended]]),
    ]) {
      const text = openRunsText(runs);
      expect(text.split('\n').filter((line) => line.startsWith('-'))).toHaveLength(1);
      const read = openRunsOf(text);
      expect([...read].sort()).toEqual([...runs].sort());
      expect(endedBefore(read.get('lease')!)).toBe(true);
      expect(read.get('epoch')).toBe(read.get('lease'));
      expect(endedBefore(read.get('sweeper')!)).toBe(false);
    }
  });

  it('keeps a hundred words over fifteen starts under 2,000 bytes (format 7 wrote them in ~2,400)', () => {
    const starts = Array.from({ length: 15 }, (_, i) => ({ createdAt: new Date(Date.UTC(2026, 10, 28, 17, i)).toISOString(), checkpointId: `01a22324-3ec9-72d2-a427-${String(i).padStart(12, '0')}` }));
    const runs = new Map(Array.from({ length: 100 }, (_, i) => [`word${String(i).padStart(4, '0')}`, starts[i % 15]!] as const));
    const bytes = codecsFor(undefined).openTerms.encode(openRunsText(runs), Buffer.alloc(0)).length;
    expect(bytes).toBeLessThan(2_000);
    const format7 = [...starts.map((s, i) => `@${i} ${s.createdAt} ${s.checkpointId}`), ...[...runs].map(([w, s]) => `${w} ${starts.indexOf(s)}`)].join('\n');
    expect(Buffer.byteLength(format7)).toBeGreaterThan(2_000);
    expect(openRunsOf(format7)).toEqual(runs);
  });

  it('reads a row format 7 wrote and writes it back in the new form, the same runs', async () => {
    const key = ks.openTerms.pack('task-1');
    await store.transact(async (tx) => tx.set(key, codecsFor(undefined).openTerms.encode(`@0 ${A.createdAt} a\n@1 ${B.createdAt} b\nlease 0\nsweeper 1\n`, Buffer.alloc(0))));
    const before = await read();
    expect(before).toEqual([['lease', 'a'], ['sweeper', 'b']]);
    await store.transact(async (tx) => rows(tx).writeOpenRuns('task-1', await rows(tx).openRuns('task-1')));
    const text = await store.transact(async (tx) => codecsFor(undefined).openTerms.decode((await tx.get(key))!, Buffer.alloc(0)) as string, { readOnly: true });
    expect(text.startsWith('+')).toBe(true);
    expect(await read()).toEqual(before);
  });
});
