import { describe, expect, it } from 'vitest';
import { tenantKeyspace } from '../../../src/store/keyspace.js';
import { applyOnce } from '../../../src/store/once.js';
import { decodeCounter } from '../../../src/store/store.js';
import type { StoreInitializer } from './initializer.js';
import { b, freshStore } from './helpers.js';

export function commitOutcomeSpec(init: StoreInitializer): void {
  describe('a commit whose outcome is unknown', () => {
    // The hook reports the next real commit's outcome as unknown, once per arming.
    let armed = false;
    const handle = freshStore(init, {
      commitOutcomeUnknown: () => {
        const unknown = armed;
        armed = false;
        return unknown;
      },
    });
    const operations = tenantKeyspace('conformance').operations;

    it('is run again by the store, so a body without an operation record applies twice', async () => {
      const { store } = handle();
      expect(store.commitOutcomeKnown).toBe(false);
      armed = true;
      await store.transact(async (tx) => tx.add(b('runs'), 1));
      expect(armed).toBe(false);
      expect(decodeCounter(await store.transact((tx) => tx.get(b('runs'))))).toBe(2n);
    });

    it('applies exactly once through applyOnce, answering the second run from the record', async () => {
      const { store } = handle();
      armed = true;
      let bodies = 0;
      const outcome = await store.transact((tx) =>
        applyOnce(tx, operations, 'op:unknown-1', async () => {
          bodies += 1;
          tx.add(b('effects'), 1);
          return { checkpointId: 'c-1', version: 1 };
        }),
      );
      expect(armed).toBe(false);
      expect(bodies).toBe(1);
      expect(outcome).toEqual({ result: { checkpointId: 'c-1', version: 1 }, applied: false });
      expect(decodeCounter(await store.transact((tx) => tx.get(b('effects'))))).toBe(1n);
    });
  });
}
