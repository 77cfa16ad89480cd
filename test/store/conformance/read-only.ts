import { describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/store/store.js';
import type { StoreInitializer } from './initializer.js';
import { b, freshStore, text } from './helpers.js';

export function readOnlySpec(init: StoreInitializer): void {
  describe('read-only transactions', () => {
    const handle = freshStore(init);

    it('see every transaction that resolved before them', async () => {
      const { store } = handle();
      for (let i = 0; i < 20; i++) {
        await store.transact(async (tx) => tx.set(b(`ro/${i}`), b(String(i))));
        const seen = await store.transact((tx) => tx.get(b(`ro/${i}`)), { readOnly: true });
        expect(text(seen)).toBe(String(i));
      }
      const rows = await store.transact((tx) => tx.getPrefix(b('ro/')), { readOnly: true });
      expect(rows).toHaveLength(20);
    });

    it('refuse writes and leave nothing behind', async () => {
      const { store } = handle();
      await expect(store.transact(async (tx) => tx.set(b('nope'), b('x')), { readOnly: true })).rejects.toBeInstanceOf(StoreError);
      expect(await store.transact((tx) => tx.get(b('nope')))).toBeUndefined();
    });

    it('never see a writer half done, and keep one snapshot across their reads', async () => {
      const { store } = handle();
      await store.transact(async (tx) => {
        tx.set(b('pair/1'), b('0'));
        tx.set(b('pair/2'), b('0'));
      });
      const views: [string | undefined, string | undefined][] = [];
      const writers = Array.from({ length: 30 }, (_, i) =>
        store.transact(async (tx) => {
          tx.set(b('pair/1'), b(String(i + 1)));
          tx.set(b('pair/2'), b(String(i + 1)));
        }),
      );
      const readers = Array.from({ length: 30 }, () =>
        store.transact(
          async (tx) => {
            const one = text(await tx.get(b('pair/1')));
            await new Promise((resolve) => setTimeout(resolve, 1));
            const two = text(await tx.get(b('pair/2')));
            views.push([one, two]);
          },
          { readOnly: true },
        ),
      );
      await Promise.all([...writers, ...readers]);
      for (const [one, two] of views) expect(one).toBe(two);
    });
  });
}
