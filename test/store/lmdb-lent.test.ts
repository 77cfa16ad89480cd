/**
 * The LMDB store lends its environment and its single writer to another
 * thread (`LmdbStore.lendReader`, `lendWriter`, `store/lmdb-lent.ts`): the
 * merge thread commits a batch there. Here the lent side runs on the test's
 * own thread (lmdb-js shares an environment between opens of one path, as
 * it does between threads): what a user of the store would check is that a
 * lent commit lands in order with the store's own, is read by every later
 * transaction, survives a restart, and that a lent writer that fails
 * changes nothing. The lent side keeps the environment open between leases
 * and gives it back when the store asks (`keepLent`), as the merge thread
 * does: a compaction's swap and a close must not leave it on the old file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb.js';
import { readLent, releaseLent, writeLent } from '../../src/store/open.js';
import { StoreError } from '../../src/store/store.js';

const key = (name: string): Buffer => Buffer.from(name);
const text = (value: Buffer | undefined): string | undefined => value?.toString();

describe('an LMDB store lent to another thread', () => {
  const dirs: string[] = [];
  const stores: LmdbStore[] = [];
  const open = (dir?: string): { store: LmdbStore; dir: string } => {
    const path = dir ?? mkdtempSync(join(tmpdir(), 'baton-lent-'));
    if (dir === undefined) dirs.push(path);
    const store = LmdbStore.open({ path });
    // As the indexer does for its merge thread: the lent side's environment is given back before a close or a swap.
    store.keepLent(releaseLent);
    stores.push(store);
    return { store, dir: path };
  };
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('commits after every commit handed over before, and before any later body runs', async () => {
    const { store } = open();
    const order: string[] = [];
    const before = store.transact(async (tx) => tx.set(key('before'), key('1'))).then(() => order.push('before committed'));
    const lent = store.lendWriter(async (lease) => {
      // The lent writer reads the environment itself: the write handed over first is there.
      const seen = await readLent(lease, async (tx) => text(await tx.get(key('before'))));
      order.push(`lent sees before=${seen}`);
      return writeLent(lease, async (tx) => tx.set(key('lent'), key('2')));
    });
    const after = store.transact(async (tx) => {
      order.push(`after reads lent=${text(await tx.get(key('lent')))}`);
      tx.set(key('after'), key('3'));
    });
    await Promise.all([before, lent, after]);
    expect(order).toEqual(['before committed', 'lent sees before=1', 'after reads lent=2']);
  });

  it('is read by later transactions, read-only or not, and survives a restart', async () => {
    const { store, dir } = open();
    await store.transact(async (tx) => tx.set(key('a'), key('old')));
    // Snapshots taken before the lend: lmdb-js shares one read transaction, which must be renewed after a commit it did not make.
    expect(text(await store.transact((tx) => tx.get(key('a')), { readOnly: true }))).toBe('old');
    expect(text(await store.transact(async (tx) => tx.get(key('a'))))).toBe('old');
    await store.lendWriter((lease) => writeLent(lease, async (tx) => tx.set(key('a'), key('new'))));
    expect(text(await store.transact((tx) => tx.get(key('a')), { readOnly: true }))).toBe('new');
    expect(text(await store.transact(async (tx) => tx.get(key('a'))))).toBe('new');
    await store.transact(async (tx) => tx.set(key('b'), key('after')));
    await store.close();
    stores.splice(stores.indexOf(store), 1);
    const { store: reopened } = open(dir);
    expect(text(await reopened.transact((tx) => tx.get(key('a')), { readOnly: true }))).toBe('new');
    expect(text(await reopened.transact((tx) => tx.get(key('b')), { readOnly: true }))).toBe('after');
    await reopened.transact(async (tx) => tx.set(key('c'), key('goes on')));
    expect(text(await reopened.transact((tx) => tx.get(key('c')), { readOnly: true }))).toBe('goes on');
  });

  it('reads what the store committed since the lent side last read, however soon after', async () => {
    const { store } = open();
    await store.transact(async (tx) => tx.set(key('k'), key('0')));
    // lmdb-js renews a thread's shared read transaction when a timer of its own fires: held here, as when the next lease comes within the same millisecond.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const lentRead = async () => text(await store.lendReader((lease) => readLent(lease, async (tx) => tx.get(key('k')))));
      const lentWriterReads = () => store.lendWriter((lease) => writeLent(lease, async (tx) => text(await tx.get(key('k')))));
      await lentRead();
      for (const value of ['1', '2', '3']) {
        await store.transact(async (tx) => tx.set(key('k'), key(`${value} read`)));
        expect(await lentRead()).toBe(`${value} read`);
        await store.transact(async (tx) => tx.set(key('k'), key(`${value} written`)));
        expect(await lentWriterReads()).toBe(`${value} written`);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers whether it committed, and a writer with nothing to write commits nothing', async () => {
    const { store } = open();
    await store.transact(async (tx) => tx.set(key('x'), key('1')));
    const committed: boolean[] = [];
    const read = await store.lendWriter(async (lease) => {
      const lent = await writeLent(lease, async (tx) => text(await tx.get(key('x'))));
      committed.push(lent.committed);
      return lent;
    });
    expect(read).toBe('1');
    await store.lendWriter(async (lease) => {
      const lent = await writeLent(lease, async (tx) => tx.clear(key('x')));
      committed.push(lent.committed);
      return lent;
    });
    expect(committed).toEqual([false, true]);
    expect(await store.transact((tx) => tx.get(key('x')), { readOnly: true })).toBeUndefined();
  });

  it('changes nothing when the lent writer fails, and the store goes on', async () => {
    const { store } = open();
    await expect(
      store.lendWriter((lease) =>
        writeLent(lease, async (tx) => {
          tx.set(key('half'), key('written'));
          throw new StoreError('internal', 'the lent writer failed');
        }),
      ),
    ).rejects.toThrow('the lent writer failed');
    expect(await store.transact((tx) => tx.get(key('half')), { readOnly: true })).toBeUndefined();
    await store.transact(async (tx) => tx.set(key('next'), key('1')));
    expect(text(await store.transact((tx) => tx.get(key('next')), { readOnly: true }))).toBe('1');
  });

  it('keeps its file in place for a lent reader: a compaction waits for it', async () => {
    const { store } = open();
    await store.transact(async (tx) => tx.set(key('k'), key('v')));
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const events: string[] = [];
    const reading = store.lendReader(async (lease) => {
      await held;
      const value = await readLent(lease, async (tx) => text(await tx.get(key('k'))));
      events.push(`read ${value}`);
    });
    const compacting = store.compact().then(() => events.push('compacted'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events).toEqual([]);
    finish();
    await Promise.all([reading, compacting]);
    expect(events).toEqual(['read v', 'compacted']);
    expect(text(await store.transact((tx) => tx.get(key('k')), { readOnly: true }))).toBe('v');
  });

  it('has the environment kept open between leases given back before a compaction swaps the file: later writes land in the new file', async () => {
    const { store, dir } = open();
    await store.lendWriter((lease) => writeLent(lease, async (tx) => tx.set(key('before'), key('1'))));
    await store.transact(async (tx) => tx.set(key('bulk'), Buffer.alloc(64 * 1024, 1)));
    await store.transact(async (tx) => tx.clear(key('bulk')));
    await store.compact();
    await store.transact(async (tx) => tx.set(key('after'), key('2')));
    await store.lendWriter((lease) => writeLent(lease, async (tx) => tx.set(key('lent after'), key('3'))));
    expect(text(await store.lendReader((lease) => readLent(lease, async (tx) => tx.get(key('after')))))).toBe('2');
    await store.close();
    stores.splice(stores.indexOf(store), 1);
    const { store: reopened } = open(dir);
    const read = (name: string) => reopened.transact(async (tx) => text(await tx.get(key(name))), { readOnly: true });
    expect([await read('before'), await read('after'), await read('lent after')]).toEqual(['1', '2', '3']);
  });

  it('closes only once the lent reader that uses the environment is done', async () => {
    const { store } = open();
    await store.transact(async (tx) => tx.set(key('k'), key('v')));
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const reading = store.lendReader((lease) =>
      readLent(lease, async (tx) => {
        await held;
        return text(await tx.get(key('k')));
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    let closed = false;
    const closing = store.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    finish();
    expect(await reading).toBe('v');
    await closing;
    expect(closed).toBe(true);
  });

  it('refuses to lend a closed store', async () => {
    const { store } = open();
    await store.close();
    await expect(store.lendWriter((lease) => writeLent(lease, async () => undefined))).rejects.toMatchObject({ code: 'unavailable' });
    await expect(store.lendReader(async () => undefined)).rejects.toMatchObject({ code: 'unavailable' });
  });
});
