import { describe, expect, it } from 'vitest';
import type { StoreInitializer } from './initializer.js';
import { b, freshStore } from './helpers.js';

const N = 50;

export function serializabilitySpec(init: StoreInitializer): void {
  describe('serializability', () => {
    const handle = freshStore(init);

    it(`ends at exactly ${N} after ${N} concurrent read-modify-write transactions on one key`, async () => {
      const { store } = handle();
      await Promise.all(
        Array.from({ length: N }, () =>
          store.transact(
            async (tx) => {
              const current = Number((await tx.get(b('counter')))?.toString() ?? '0');
              // Yield between the read and the write so that the transactions interleave.
              await new Promise((resolve) => setImmediate(resolve));
              tx.set(b('counter'), b(String(current + 1)));
            },
            { maxRetries: 1_000, timeoutMs: 60_000 },
          ),
        ),
      );
      const final = await store.transact((tx) => tx.get(b('counter')));
      expect(Number(final?.toString())).toBe(N);
    });

    it('keeps an invariant across two keys under concurrent transfers', async () => {
      const { store } = handle();
      await store.transact(async (tx) => {
        tx.set(b('acct/a'), b('100'));
        tx.set(b('acct/b'), b('100'));
      });
      const transfer = (from: string, to: string) =>
        store.transact(
          async (tx) => {
            const x = Number((await tx.get(b(from)))!.toString());
            const y = Number((await tx.get(b(to)))!.toString());
            await new Promise((resolve) => setImmediate(resolve));
            tx.set(b(from), b(String(x - 1)));
            tx.set(b(to), b(String(y + 1)));
          },
          { maxRetries: 1_000, timeoutMs: 60_000 },
        );
      const audits: number[] = [];
      const audit = () =>
        store.transact(async (tx) => {
          const rows = await tx.getPrefix(b('acct/'));
          audits.push(rows.reduce((sum, row) => sum + Number(row.value.toString()), 0));
        });
      await Promise.all(
        Array.from({ length: 30 }, (_, i) => [transfer(i % 2 ? 'acct/a' : 'acct/b', i % 2 ? 'acct/b' : 'acct/a'), audit()]).flat(),
      );
      expect(new Set(audits)).toEqual(new Set([200]));
    });
  });
}
