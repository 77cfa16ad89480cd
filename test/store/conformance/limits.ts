import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { STORE_LIMITS, StoreError, type FinishedTransaction } from '../../../src/store/store.js';
import type { StoreInitializer } from './initializer.js';
import { b, freshStore } from './helpers.js';

/** What `transact` rejected with, for asserting on its code. */
async function failure(work: Promise<unknown>): Promise<StoreError> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

const bytes = (length: number, fill = 0x61): Buffer => Buffer.alloc(length, fill);

export function limitsSpec(init: StoreInitializer): void {
  describe("FoundationDB's limits", () => {
    const finished: FinishedTransaction[] = [];
    const handle = freshStore(init, { onTransaction: (done) => finished.push(done) });

    it('accepts a value of 100,000 bytes and refuses one byte more with too_large, writing nothing', async () => {
      const { store } = handle();
      await store.transact(async (tx) => tx.set(b('v/max'), bytes(STORE_LIMITS.valueBytes)));
      const error = await failure(
        store.transact(async (tx) => {
          tx.set(b('v/other'), b('x'));
          tx.set(b('v/over'), bytes(STORE_LIMITS.valueBytes + 1));
        }),
      );
      expect(error.code).toBe('too_large');
      expect(error.retriable).toBe(false);
      const after = await store.transact(async (tx) => [await tx.get(b('v/max')), await tx.get(b('v/over')), await tx.get(b('v/other'))]);
      expect(after.map((value) => value?.length)).toEqual([STORE_LIMITS.valueBytes, undefined, undefined]);
    });

    it('fails the transaction even when the body catches the refusal, as FoundationDB defers it to the commit', async () => {
      const { store } = handle();
      const error = await failure(
        store.transact(async (tx) => {
          try {
            tx.set(b('v/over'), bytes(STORE_LIMITS.valueBytes + 1));
          } catch {
            // A body that swallows the refusal must not commit the rest.
          }
          tx.set(b('v/after'), b('x'));
        }),
      );
      expect(error.code).toBe('too_large');
      expect(await store.transact((tx) => tx.get(b('v/after')))).toBeUndefined();
    });

    it('accepts a key of 1,978 bytes and refuses longer ones (up to FoundationDB own 10,000 and beyond) with too_large', async () => {
      const { store } = handle();
      const longest = Buffer.concat([b('k/'), bytes(STORE_LIMITS.keyBytes - 2)]);
      await store.transact(async (tx) => tx.set(longest, b('fits')));
      expect((await store.transact((tx) => tx.get(longest)))?.toString()).toBe('fits');
      for (const length of [STORE_LIMITS.keyBytes + 1, 10_000, 10_001]) {
        const key = Buffer.concat([b('k/'), bytes(length - 2)]);
        expect((await failure(store.transact(async (tx) => tx.set(key, b('x'))))).code).toBe('too_large');
        expect((await failure(store.transact(async (tx) => tx.clear(key)))).code).toBe('too_large');
      }
    });

    it('refuses keys from 0xff on, which FoundationDB keeps for itself, on reads and writes alike', async () => {
      const { store } = handle();
      const system = Buffer.from([0xff, 0x01]);
      expect((await failure(store.transact(async (tx) => tx.set(system, b('x'))))).code).toBe('internal');
      expect((await failure(store.transact((tx) => tx.get(system), { readOnly: true }))).code).toBe('internal');
      expect((await failure(store.transact((tx) => tx.getRange(b('a'), Buffer.from([0xff, 0x00]))))).code).toBe('internal');
      // The ordinary keys end at 0xff itself, which a range may name as its end.
      expect(await store.transact((tx) => tx.getRange(b('a'), Buffer.from([0xff])))).toEqual([]);
    });

    it('refuses a transaction writing more than 10,000,000 bytes with too_large at commit, and accepts one just under', async () => {
      const { store } = handle();
      const chunk = bytes(95_000);
      // 100 values and their keys: about 9.5 MB, under the limit.
      await store.transact(async (tx) => {
        for (let i = 0; i < 100; i++) tx.set(b(`t/ok/${i}`), chunk);
      });
      const accepted = finished.filter((f) => f.committed).at(-1)!;
      expect(accepted.bytesWritten).toBeGreaterThan(9_500_000);
      expect(accepted.bytesWritten).toBeLessThanOrEqual(STORE_LIMITS.transactionBytes);
      const error = await failure(
        store.transact(async (tx) => {
          for (let i = 0; i < 106; i++) tx.set(b(`t/over/${i}`), chunk);
        }),
      );
      expect(error.code).toBe('too_large');
      expect(finished.at(-1)).toMatchObject({ committed: false });
      expect(finished.at(-1)!.bytesWritten).toBeGreaterThan(STORE_LIMITS.transactionBytes);
      expect(await store.transact((tx) => tx.getPrefix(b('t/over/'), { limit: 1 }))).toEqual([]);
    });

    it('fails an attempt that runs past 5 seconds with timeout, whatever timeoutMs allows, writing nothing', async () => {
      const { store } = handle();
      await store.transact(async (tx) => tx.set(b('slow'), b('before')));
      const started = Date.now();
      const slowBody = async (tx: Parameters<Parameters<typeof store.transact>[0]>[0], write: boolean) => {
        await tx.get(b('slow'));
        if (write) tx.set(b('slow'), b('after'));
        await sleep(STORE_LIMITS.transactionMs + 200);
        return tx.get(b('slow'));
      };
      // A writer and a reader side by side, so the one test waits about 5 seconds, not 10.
      const [writer, reader] = await Promise.all([
        failure(store.transact((tx) => slowBody(tx, true), { timeoutMs: 30_000 })),
        failure(store.transact((tx) => slowBody(tx, false), { timeoutMs: 30_000, readOnly: true })),
      ]);
      expect([writer.code, reader.code]).toEqual(['timeout', 'timeout']);
      expect(writer.retriable).toBe(false);
      expect(Date.now() - started).toBeLessThan(STORE_LIMITS.transactionMs + 2_000);
      expect((await store.transact((tx) => tx.get(b('slow'))))?.toString()).toBe('before');
    }, 15_000);
  });

  describe("the store's own counters", () => {
    const finished: FinishedTransaction[] = [];
    const handle = freshStore(init, { onTransaction: (done) => finished.push(done) });

    it('count keys and bytes read and written by each attempt, readable inside the body and reported after it', async () => {
      const { store } = handle();
      await store.transact(async (tx) => {
        tx.set(b('s/1'), b('one'));
        tx.set(b('s/2'), b('two'));
        tx.set(b('s/3'), b('three'));
        expect(tx.stats().bytesWritten).toBe(3 * (2 * 3) + 3 + 3 + 5);
      });
      expect(finished.at(-1)).toMatchObject({ committed: true, readOnly: false, keysRead: 0, bytesWritten: 29 });
      const inside = await store.transact(
        async (tx) => {
          await tx.get(b('s/1'));
          await tx.get(b('s/missing'));
          await tx.getPrefix(b('s/'));
          await tx.getRange(b('x'), b('y'));
          return tx.stats();
        },
        { readOnly: true },
      );
      // Two point reads, three rows, and one empty range read that still cost a round trip.
      expect(inside.keysRead).toBe(6);
      expect(inside.bytesRead).toBe(6 + 9 + (6 + 6 + 8));
      expect(finished.at(-1)).toMatchObject({ committed: false, readOnly: true, keysRead: 6, bytesWritten: 0 });
      expect(finished.at(-1)!.elapsedMs).toBeGreaterThanOrEqual(0);
    });
  });
}
