import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/store/store.js';
import type { StoreInitializer } from './initializer.js';
import { b, freshStore, text } from './helpers.js';

/** Whether a transaction can name read conflicts: only a store whose write transactions overlap (FoundationDB). */
const namesConflicts = (tx: Transaction): boolean => tx.addReadConflictKey !== undefined;

/**
 * What the indexer's merge in one transaction relies on (`Indexer.mergeInOne`):
 * a range read as a snapshot, keys named as read without reading them, and a
 * body whose writes are left unread (`TransactOptions.writesUnread`).
 */
export function snapshotReadsSpec(init: StoreInitializer): void {
  describe('snapshot range reads, read-conflict keys, writes left unread', () => {
    const handle = freshStore(init);

    it('reads the same rows as a snapshot as without, in either order', async () => {
      const { store } = handle();
      await store.transact(async (tx) => {
        for (let i = 0; i < 5; i++) tx.set(b(`snap/${i}`), b(`v${i}`));
      });
      const rows = await store.transact(async (tx) => ({
        plain: await tx.getRange(b('snap/'), b('snap0'), { limit: 4 }),
        snapshot: await tx.getRange(b('snap/'), b('snap0'), { limit: 4, snapshot: true }),
        reversed: await tx.getRange(b('snap/'), b('snap0'), { reverse: true, snapshot: true }),
      }));
      const keys = (list: { key: Buffer }[]) => list.map((row) => text(row.key));
      expect(keys(rows.snapshot)).toEqual(['snap/0', 'snap/1', 'snap/2', 'snap/3']);
      expect(keys(rows.snapshot)).toEqual(keys(rows.plain));
      expect(keys(rows.reversed)).toEqual(['snap/4', 'snap/3', 'snap/2', 'snap/1', 'snap/0']);
    });

    it('commits every write of a body that reads nothing after it writes', async () => {
      const { store } = handle();
      await store.transact(async (tx) => tx.set(b('unread/gone'), b('x')));
      await store.transact(
        async (tx) => {
          const before = await tx.get(b('unread/a'));
          tx.set(b('unread/a'), b('1'));
          tx.set(b('unread/b'), b(before === undefined ? 'was absent' : 'was there'));
          tx.clear(b('unread/gone'));
        },
        { writesUnread: true },
      );
      const after = await store.transact(async (tx) => [await tx.get(b('unread/a')), await tx.get(b('unread/b')), await tx.get(b('unread/gone'))]);
      expect(after.map(text)).toEqual(['1', 'was absent', undefined]);
    });

    it('runs a body again when a key it named as read was written meanwhile, but not for a row added to a range it read as a snapshot', async (context) => {
      const { store } = handle();
      if (!(await store.transact(async (tx) => namesConflicts(tx)))) {
        context.skip("this store's write transactions never overlap (LMDB): no write can come between a body's reads and its commit");
        return;
      }
      await store.transact(async (tx) => {
        tx.set(b('list/1'), b('entry 1'));
        tx.set(b('list/2'), b('entry 2'));
      });
      // Another writer adds an entry to the list while the body holds its snapshot of it: no conflict.
      let runs = 0;
      await store.transact(async (tx) => {
        runs += 1;
        const listed = await tx.getRange(b('list/'), b('list0'), { snapshot: true });
        if (runs === 1) await store.transact(async (other) => other.set(b('list/3'), b('entry 3')));
        for (const { key } of listed) {
          tx.addReadConflictKey!(key);
          tx.clear(key);
        }
      });
      expect(runs).toBe(1);
      expect((await store.transact((tx) => tx.getPrefix(b('list/')))).map((row) => text(row.key))).toEqual(['list/3']);

      // Another writer changes an entry the body named as read: the body runs again and sees the change.
      await store.transact(async (tx) => tx.set(b('list/4'), b('entry 4')));
      runs = 0;
      const seen: string[] = [];
      await store.transact(async (tx) => {
        runs += 1;
        const listed = await tx.getRange(b('list/'), b('list0'), { snapshot: true });
        seen.push(listed.map((row) => text(row.value)).join(','));
        if (runs === 1) await store.transact(async (other) => other.set(b('list/4'), b('entry 4, changed')));
        for (const { key } of listed) {
          tx.addReadConflictKey!(key);
          tx.clear(key);
        }
      });
      expect(runs).toBe(2);
      expect(seen).toEqual(['entry 3,entry 4', 'entry 3,entry 4, changed']);
      expect(await store.transact((tx) => tx.getPrefix(b('list/')))).toEqual([]);
    });

    it('keeps no read-your-writes map for a body whose writes are left unread, where writes overlap', async (context) => {
      const { store } = handle();
      if (!(await store.transact(async (tx) => namesConflicts(tx)))) {
        context.skip('this store (LMDB) keeps its one writer\'s writes readable whatever the option; only FoundationDB\'s client has a map to leave out');
        return;
      }
      await store.transact(async (tx) => tx.set(b('ryw/k'), b('stored')));
      // What the option promises the store, broken on purpose: the read then sees the stored value, so the option reached the client.
      const read = await store.transact(
        async (tx) => {
          tx.set(b('ryw/k'), b('written'));
          return text(await tx.get(b('ryw/k')));
        },
        { writesUnread: true },
      );
      expect(read).toBe('stored');
      expect(text(await store.transact((tx) => tx.get(b('ryw/k'))))).toBe('written');
      // Without it, the transaction reads its own write.
      expect(await store.transact(async (tx) => (tx.set(b('ryw/k'), b('again')), text(await tx.get(b('ryw/k')))))).toBe('again');
    });
  });
}
