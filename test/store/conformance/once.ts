import { describe, expect, it } from 'vitest';
import { tenantKeyspace } from '../../../src/store/keyspace.js';
import { applyOnce, OperationReusedError } from '../../../src/store/once.js';
import { decodeCounter } from '../../../src/store/store.js';
import type { StoreInitializer } from './initializer.js';
import { b, freshStore } from './helpers.js';

export function onceSpec(init: StoreInitializer): void {
  describe('operations applied once', () => {
    const handle = freshStore(init);
    const operations = tenantKeyspace('conformance').operations;

    it('applies an operation sent twice (a retry after an unknown commit) only once', async () => {
      const { store } = handle();
      const run = () =>
        store.transact((tx) =>
          applyOnce(tx, operations, 'op-1', async () => {
            tx.add(b('applied'), 1);
            return { checkpointId: 'c-1', version: 1 };
          }),
        );
      const first = await run();
      const second = await run();
      expect(first).toEqual({ result: { checkpointId: 'c-1', version: 1 }, applied: true });
      expect(second).toEqual({ result: { checkpointId: 'c-1', version: 1 }, applied: false });
      expect(decodeCounter(await store.transact((tx) => tx.get(b('applied'))))).toBe(1n);
    });

    it('refuses an operation id recorded for a different request, writing nothing', async () => {
      const { store } = handle();
      await store.transact((tx) => applyOnce(tx, operations, 'op-2', async () => 'first', 'request-a'));
      await expect(
        store.transact((tx) =>
          applyOnce(tx, operations, 'op-2', async () => {
            tx.set(b('should-not'), b('exist'));
            return 'second';
          }, 'request-b'),
        ),
      ).rejects.toBeInstanceOf(OperationReusedError);
      expect(await store.transact((tx) => tx.get(b('should-not')))).toBeUndefined();
    });

    it('applies an operation once when both copies race', async () => {
      const { store } = handle();
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          store.transact(
            (tx) =>
              applyOnce(tx, operations, 'op-race', async () => {
                tx.add(b('raced'), 1);
                return 'done';
              }),
            { maxRetries: 100, timeoutMs: 30_000 },
          ),
        ),
      );
      expect(results.filter((r) => r.applied)).toHaveLength(1);
      expect(decodeCounter(await store.transact((tx) => tx.get(b('raced'))))).toBe(1n);
    });
  });
}
