import { describe, expect, it } from 'vitest';
import type { StoreInitializer } from './initializer.js';
import { b, freshStore, text } from './helpers.js';

export function atomicitySpec(init: StoreInitializer): void {
  describe('atomicity', () => {
    const handle = freshStore(init);

    it('writes nothing when the body throws after writing', async () => {
      const { store } = handle();
      await store.transact(async (tx) => tx.set(b('kept'), b('before')));
      await expect(
        store.transact(async (tx) => {
          tx.set(b('new'), b('1'));
          tx.set(b('kept'), b('after'));
          tx.clear(b('kept'));
          tx.add(b('n'), 1);
          throw new Error('body failed');
        }),
      ).rejects.toThrow('body failed');
      const after = await store.transact(async (tx) => ({
        fresh: await tx.get(b('new')),
        kept: text(await tx.get(b('kept'))),
        n: await tx.get(b('n')),
      }));
      expect(after).toEqual({ fresh: undefined, kept: 'before', n: undefined });
    });

    it('applies all writes of a transaction together', async () => {
      const { store } = handle();
      await store.transact(async (tx) => {
        for (let i = 0; i < 50; i++) tx.set(b(`all/${String(i).padStart(2, '0')}`), b(String(i)));
      });
      const rows = await store.transact((tx) => tx.getPrefix(b('all/')));
      expect(rows).toHaveLength(50);
    });
  });
}
