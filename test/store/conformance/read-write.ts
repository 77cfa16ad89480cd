import { describe, expect, it } from 'vitest';
import { decodeCounter, STORE_LIMITS } from '../../../src/store/store.js';
import type { StoreInitializer } from './initializer.js';
import { b, freshStore, text } from './helpers.js';

export function readWriteSpec(init: StoreInitializer): void {
  describe('reads and writes', () => {
    const handle = freshStore(init);

    it('reads back a committed value, and undefined for an absent key', async () => {
      const { store } = handle();
      await store.transact(async (tx) => tx.set(b('k'), b('v1')));
      const [value, absent] = await store.transact(async (tx) => [await tx.get(b('k')), await tx.get(b('missing'))]);
      expect(text(value)).toBe('v1');
      expect(absent).toBeUndefined();
    });

    it('commits blind writes with the transaction: readers see them set and cleared, limits apply', async () => {
      const { store } = handle();
      await store.transact(async (tx) => {
        tx.set(b('record'), b('r'));
        tx.setBlind(b('ix/1'), b('one'));
        tx.setBlind(b('ix/2'), b('two'));
      });
      const read = () => store.transact(async (tx) => (await tx.getPrefix(b('ix/'))).map((row) => `${row.key.toString()}=${text(row.value)}`), { readOnly: true });
      expect(await read()).toEqual(['ix/1=one', 'ix/2=two']);
      // A transaction of blind writes alone still commits.
      await store.transact(async (tx) => {
        tx.clearBlind(b('ix/1'));
        tx.setBlind(b('ix/3'), b('three'));
      });
      expect(await read()).toEqual(['ix/2=two', 'ix/3=three']);
      const error = await store
        .transact(async (tx) => {
          tx.setBlind(b('ix/big'), Buffer.alloc(STORE_LIMITS.valueBytes + 1));
        })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'too_large' });
      expect(await read()).toEqual(['ix/2=two', 'ix/3=three']);
    });

    it('sets a key unless it holds the value already: absent, cleared or different, it is written', async () => {
      const { store } = handle();
      const read = () => store.transact((tx) => tx.get(b('flag')), { readOnly: true });
      await store.transact(async (tx) => tx.setUnlessHeld(b('flag'), Buffer.alloc(0)));
      expect((await read())?.length).toBe(0);
      await store.transact(async (tx) => tx.setUnlessHeld(b('flag'), Buffer.alloc(0)));
      expect((await read())?.length).toBe(0);
      await store.transact(async (tx) => tx.clear(b('flag')));
      expect(await read()).toBeUndefined();
      await store.transact(async (tx) => tx.setUnlessHeld(b('flag'), Buffer.alloc(0)));
      expect((await read())?.length).toBe(0);
      await store.transact(async (tx) => tx.setUnlessHeld(b('flag'), b('two')));
      expect(text(await read())).toBe('two');
    });

    it('keeps an empty value apart from an absent key', async () => {
      const { store } = handle();
      await store.transact(async (tx) => tx.set(b('empty'), Buffer.alloc(0)));
      const value = await store.transact((tx) => tx.get(b('empty')));
      expect(value).toBeDefined();
      expect(value!.length).toBe(0);
    });

    it('sees its own writes and clears inside one transaction', async () => {
      const { store } = handle();
      await store.transact(async (tx) => tx.set(b('gone'), b('x')));
      const seen = await store.transact(async (tx) => {
        tx.set(b('a'), b('1'));
        const afterSet = text(await tx.get(b('a')));
        tx.clear(b('gone'));
        const afterClear = await tx.get(b('gone'));
        tx.set(b('a'), b('2'));
        return { afterSet, afterClear, last: text(await tx.get(b('a'))) };
      });
      expect(seen).toEqual({ afterSet: '1', afterClear: undefined, last: '2' });
      expect(text(await store.transact((tx) => tx.get(b('a'))))).toBe('2');
    });

    it('adds to counters atomically, absent counting as zero', async () => {
      const { store } = handle();
      await store.transact(async (tx) => tx.add(b('count'), 5));
      await store.transact(async (tx) => tx.add(b('count'), -2));
      await Promise.all(Array.from({ length: 20 }, () => store.transact(async (tx) => tx.add(b('count'), 1))));
      expect(decodeCounter(await store.transact((tx) => tx.get(b('count'))))).toBe(23n);
    });

    it('returns the body result and rethrows the body error as is', async () => {
      const { store } = handle();
      expect(await store.transact(async () => 42)).toBe(42);
      class Mine extends Error {}
      await expect(store.transact(async () => Promise.reject(new Mine('no')))).rejects.toBeInstanceOf(Mine);
    });

    it('answers ping while open', async () => {
      await expect(handle().store.ping()).resolves.toBeUndefined();
    });
  });
}
