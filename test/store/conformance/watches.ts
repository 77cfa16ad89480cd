import { describe, expect, it } from 'vitest';
import type { StoreInitializer } from './initializer.js';
import { freshStore } from './helpers.js';

const key = Buffer.from('watched');
const settled = (promise: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

/**
 * Watches, where a store has them (stores shared by several processes): a
 * watch reads the key's value and settles once a later commit changes it,
 * added to by an atomic add as the event clock is; cancelled, it settles
 * false. A store without watches (one process holds it) has nothing to check.
 */
export function watchSpec(init: StoreInitializer): void {
  describe('watches', () => {
    const handle = freshStore(init);

    it('reads the value, stays pending while nothing changes, and fires after a commit adds to the key', async (context) => {
      const { store } = handle();
      if (store.watch === undefined) {
        context.skip(`${init.name} has no watches: one process holds it and knows its commits itself`);
        return;
      }
      await store.transact(async (tx) => tx.add(key, 1));
      const watch = await store.watch(key);
      expect(watch.value?.readUInt32LE(0)).toBe(1);
      expect(await settled(watch.changed, 300)).toBe(false);
      await store.transact(async (tx) => tx.add(key, 1));
      expect(await settled(watch.changed, 5_000)).toBe(true);
      expect(await watch.changed).toBe(true);
    });

    it('settles false when cancelled', async (context) => {
      const { store } = handle();
      if (store.watch === undefined) {
        context.skip(`${init.name} has no watches: one process holds it and knows its commits itself`);
        return;
      }
      const watch = await store.watch(key);
      watch.cancel();
      expect(await watch.changed).toBe(false);
    });
  });
}
