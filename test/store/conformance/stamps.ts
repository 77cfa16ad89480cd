import { describe, expect, it } from 'vitest';
import { setStampedTuple, tenantKeyspace } from '../../../src/store/keyspace.js';
import { COMMIT_STAMP_BYTES } from '../../../src/store/store.js';
import type { StoreInitializer } from './initializer.js';
import { freshStore } from './helpers.js';

export function stampSpec(init: StoreInitializer): void {
  describe('commit stamps', () => {
    const handle = freshStore(init);
    const events = tenantKeyspace('conformance').events;

    it('orders stamped keys by commit order across concurrent transactions', async () => {
      const { store } = handle();
      const order: number[] = [];
      const stamps: Buffer[] = [];
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          let stamp!: Promise<Buffer>;
          await store.transact(async (tx) => {
            setStampedTuple(tx, events, 0, [i], Buffer.from(String(i)));
            stamp = tx.commitStamp();
          });
          order.push(i);
          stamps[i] = await stamp;
        }),
      );
      const rows = await store.transact((tx) => tx.getPrefix(events.prefix));
      expect(rows).toHaveLength(40);
      const listed = rows.map((row) => Number(row.value.toString()));
      // Sorted stamp order is the order the commits' stamps say they happened in.
      const byStamp = [...stamps.keys()].sort((x, y) => Buffer.compare(stamps[x]!, stamps[y]!));
      expect(listed).toEqual(byStamp);
      for (const stamp of stamps) expect(stamp.length).toBe(COMMIT_STAMP_BYTES);
      expect(new Set(stamps.map((s) => s.toString('hex'))).size).toBe(40);
    });

    it('stamps a later transaction after an earlier one that had resolved', async () => {
      const { store } = handle();
      const stamps: Buffer[] = [];
      for (let i = 0; i < 5; i++) {
        let stamp!: Promise<Buffer>;
        await store.transact(async (tx) => {
          setStampedTuple(tx, events, 0, [], Buffer.from(String(i)));
          stamp = tx.commitStamp();
        });
        stamps.push(await stamp);
      }
      for (let i = 1; i < stamps.length; i++) expect(Buffer.compare(stamps[i - 1]!, stamps[i]!)).toBeLessThan(0);
      const rows = await store.transact((tx) => tx.getPrefix(events.prefix));
      expect(rows.map((row) => row.value.toString())).toEqual(['0', '1', '2', '3', '4']);
    });

    it('keeps stamps growing after the store is closed and opened again', async () => {
      const current = handle();
      const stampOf = async (store: typeof current.store, value: string): Promise<Buffer> => {
        let stamp!: Promise<Buffer>;
        await store.transact(async (tx) => {
          setStampedTuple(tx, events, 0, [], Buffer.from(value));
          stamp = tx.commitStamp();
        });
        return stamp;
      };
      const before = await stampOf(current.store, 'before');
      await current.store.close();
      const reopened = await current.reopen();
      const after = await stampOf(reopened, 'after');
      expect(Buffer.compare(before, after)).toBeLessThan(0);
      const rows = await reopened.transact((tx) => tx.getPrefix(events.prefix));
      expect(rows.map((row) => row.value.toString())).toEqual(['before', 'after']);
    });

    it('unpacks a stamped key as a tuple versionstamp, ordering keys of one commit by their order', async () => {
      const { store } = handle();
      let stamp!: Promise<Buffer>;
      await store.transact(async (tx) => {
        setStampedTuple(tx, events, 1, ['second'], Buffer.from('b'));
        setStampedTuple(tx, events, 0, ['first'], Buffer.from('a'));
        stamp = tx.commitStamp();
      });
      const rows = await store.transact((tx) => tx.getPrefix(events.prefix));
      expect(rows.map((row) => row.value.toString())).toEqual(['a', 'b']);
      const parts = events.unpack(rows[0]!.key);
      const versionstamp = parts[0] as unknown as { type: string; value: Buffer };
      expect(versionstamp.type).toBe('versionstamp');
      expect(versionstamp.value.subarray(0, COMMIT_STAMP_BYTES).equals(await stamp)).toBe(true);
      expect(parts[1]).toBe('first');
    });
  });
}
