import { describe, expect, it } from 'vitest';
import type { StoreInitializer } from './initializer.js';
import { b, freshStore, text } from './helpers.js';

const keysOf = (rows: { key: Buffer }[]) => rows.map((row) => row.key.toString('latin1'));

export function rangeSpec(init: StoreInitializer): void {
  describe('ranges', () => {
    const handle = freshStore(init);

    async function seed(): Promise<void> {
      await handle().store.transact(async (tx) => {
        for (const key of ['a', 'b/1', 'b/2', 'b/3', 'b0', 'c']) tx.set(b(key), b(`v:${key}`));
        tx.set(Buffer.from([0x62, 0x2f, 0xff]), b('high'));
      });
    }

    it('returns [begin, end) in bytewise order', async () => {
      await seed();
      const rows = await handle().store.transact((tx) => tx.getRange(b('b/1'), b('b0')));
      expect(keysOf(rows)).toEqual(['b/1', 'b/2', 'b/3', 'b/\xff']);
      expect(text(rows[0]!.value)).toBe('v:b/1');
    });

    it('returns the highest keys first when reversed, and honours the limit both ways', async () => {
      await seed();
      const { store } = handle();
      const reversed = await store.transact((tx) => tx.getRange(b('a'), b('c')));
      const back = await store.transact((tx) => tx.getRange(b('a'), b('c'), { reverse: true }));
      expect(keysOf(back)).toEqual(keysOf(reversed).reverse());
      expect(keysOf(back)).not.toContain('c');
      expect(keysOf(back)).toContain('a');
      const firstTwo = await store.transact((tx) => tx.getRange(b('a'), b('d'), { limit: 2 }));
      const lastTwo = await store.transact((tx) => tx.getRange(b('a'), b('d'), { limit: 2, reverse: true }));
      expect(keysOf(firstTwo)).toEqual(['a', 'b/1']);
      expect(keysOf(lastTwo)).toEqual(['c', 'b0']);
    });

    it('bounds a prefix range exactly: the prefix key itself, no sibling', async () => {
      await seed();
      const { store } = handle();
      await store.transact(async (tx) => tx.set(b('b/'), b('prefix itself')));
      const rows = await store.transact((tx) => tx.getPrefix(b('b/')));
      expect(keysOf(rows)).toEqual(['b/', 'b/1', 'b/2', 'b/3', 'b/\xff']);
      const none = await store.transact((tx) => tx.getPrefix(b('zz')));
      expect(none).toEqual([]);
    });

    it('merges the transaction own writes and clears into its range reads', async () => {
      await seed();
      const rows = await handle().store.transact(async (tx) => {
        tx.clear(b('b/2'));
        tx.set(b('b/25'), b('new'));
        tx.set(b('b/1'), b('changed'));
        return tx.getPrefix(b('b/'));
      });
      expect(keysOf(rows)).toEqual(['b/1', 'b/25', 'b/3', 'b/\xff']);
      expect(text(rows[0]!.value)).toBe('changed');
    });

    it('clears a range and a prefix, leaving the neighbours', async () => {
      await seed();
      const { store } = handle();
      await store.transact(async (tx) => tx.clearRange(b('b/2'), b('b0')));
      expect(keysOf(await store.transact((tx) => tx.getRange(b(''), b('\xff'))))).toEqual(['a', 'b/1', 'b0', 'c']);
      await store.transact(async (tx) => {
        tx.set(b('b/9'), b('x'));
        tx.clearPrefix(b('b/'));
        tx.set(b('b/after'), b('kept'));
      });
      expect(keysOf(await store.transact((tx) => tx.getRange(b(''), b('\xff'))))).toEqual(['a', 'b/after', 'b0', 'c']);
    });

    it('returns nothing for an empty or inverted range', async () => {
      await seed();
      const { store } = handle();
      expect(await store.transact((tx) => tx.getRange(b('b'), b('b')))).toEqual([]);
      expect(await store.transact((tx) => tx.getRange(b('c'), b('a')))).toEqual([]);
    });
  });
}
