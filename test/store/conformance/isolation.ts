import { describe, expect, it } from 'vitest';
import type { StoreInitializer } from './initializer.js';
import { b, freshStore, text } from './helpers.js';

export function isolationSpec(init: StoreInitializer): void {
  describe('isolation', () => {
    const handle = freshStore(init);

    it('never shows another transaction half done', async () => {
      const { store } = handle();
      const views: string[] = [];
      const writers = Array.from({ length: 20 }, (_, i) =>
        store.transact(async (tx) => {
          tx.set(b('pair/1'), b(String(i)));
          await new Promise((resolve) => setImmediate(resolve));
          tx.set(b('pair/2'), b(String(i)));
        }),
      );
      const readers = Array.from({ length: 20 }, () =>
        store.transact(async (tx) => {
          const one = text(await tx.get(b('pair/1')));
          const two = text(await tx.get(b('pair/2')));
          views.push(`${one}|${two}`);
        }),
      );
      await Promise.all([...writers, ...readers]);
      for (const view of views) {
        const [one, two] = view.split('|');
        expect(one).toBe(two);
      }
    });

    it('shows nothing of a transaction that failed, to any later reader', async () => {
      const { store } = handle();
      const failing = store.transact(async (tx) => {
        tx.set(b('ghost'), b('boo'));
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('abandoned');
      });
      const reader = store.transact((tx) => tx.get(b('ghost')));
      await expect(failing).rejects.toThrow('abandoned');
      expect(await reader).toBeUndefined();
      expect(await store.transact((tx) => tx.get(b('ghost')))).toBeUndefined();
    });
  });
}
