import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES, clearRecord, readRecord, readRecordShaped, tenantKeyspace, writeRecord } from '../../../src/store/keyspace.js';
import type { Transaction } from '../../../src/store/store.js';
import type { StoreInitializer } from './initializer.js';
import { freshStore } from './helpers.js';

export function keyspaceSpec(init: StoreInitializer): void {
  describe('records split across keys', () => {
    const handle = freshStore(init);
    const space = tenantKeyspace('conformance').checkpoints;

    it('stores a 2 MB record in chunks and reads it back byte for byte', async () => {
      const { store } = handle();
      const blob = randomBytes(2 * 1024 * 1024);
      await store.transact(async (tx) => {
        await writeRecord(tx, space, ["task", "big"], { blob, note: "large" });
      });
      const chunks = await store.transact((tx) => tx.getPrefix(space.pack('task', 'big')));
      expect(chunks.length).toBe(Math.ceil((blob.length + 32) / CHUNK_BYTES));
      for (const chunk of chunks) expect(chunk.value.length).toBeLessThanOrEqual(CHUNK_BYTES);
      const back = await store.transact((tx) => readRecord<{ blob: Uint8Array; note: string }>(tx, space, ['task', 'big']));
      expect(back?.note).toBe('large');
      expect(Buffer.from(back!.blob).equals(blob)).toBe(true);
    });

    it('clears the old chunks when a record shrinks, and all of them on delete', async () => {
      const { store } = handle();
      await store.transact(async (tx) => writeRecord(tx, space, ['task', 'r'], { blob: randomBytes(500_000) }));
      await store.transact(async (tx) => writeRecord(tx, space, ['task', 'r'], { small: true }));
      expect(await store.transact((tx) => tx.getPrefix(space.pack('task', 'r')))).toHaveLength(1);
      expect(await store.transact((tx) => readRecord(tx, space, ['task', 'r']))).toEqual({ small: true });
      await store.transact(async (tx) => clearRecord(tx, space, ['task', 'r']));
      expect(await store.transact((tx) => readRecord(tx, space, ['task', 'r']))).toBeUndefined();
      expect(await store.transact((tx) => tx.getPrefix(space.pack('task', 'r')))).toEqual([]);
    });

    it('keeps exactly the chunks of the latest size as a record grows and shrinks', async () => {
      const { store } = handle();
      const sizes = [100, 400_000, 50, 200_000, 900_000, 10];
      for (const size of sizes) {
        const blob = randomBytes(size);
        await store.transact(async (tx) => {
          await writeRecord(tx, space, ['task', 'g'], { blob });
        });
        const chunks = await store.transact((tx) => tx.getPrefix(space.pack('task', 'g')));
        const parts = chunks.map((c) => space.unpack(c.key)[2]);
        if (size + 16 <= CHUNK_BYTES) expect(parts).toEqual([0]);
        else expect(parts).toEqual(Array.from({ length: chunks.length }, (_, i) => i + 1));
        const back = await store.transact((tx) => readRecord<{ blob: Uint8Array }>(tx, space, ['task', 'g']));
        expect(Buffer.from(back!.blob).equals(blob)).toBe(true);
      }
    });

    it('writes a record back in the shape its transaction read, without reading it again, as it grows and shrinks', async () => {
      const { store } = handle();
      const sizes = [100, 400_000, 50, 200_000, 900_000, 10];
      let expected: 'whole' | 'split' | 'absent' = 'absent';
      for (const size of sizes) {
        const blob = randomBytes(size);
        const { shape, reads } = await store.transact(async (tx) => {
          const found = await readRecordShaped<{ blob: Uint8Array }>(tx, space, ['task', 's']);
          const counted = countingReads(tx);
          await writeRecord(counted.tx, space, ['task', 's'], { blob }, undefined, found.shape);
          return { shape: found.shape, reads: counted.reads() };
        });
        expect(shape).toBe(expected);
        expect(reads).toBe(0);
        expected = size + 16 <= CHUNK_BYTES ? 'whole' : 'split';
        const chunks = await store.transact((tx) => tx.getPrefix(space.pack('task', 's')));
        const parts = chunks.map((c) => space.unpack(c.key)[2]);
        if (expected === 'whole') expect(parts).toEqual([0]);
        else expect(parts).toEqual(Array.from({ length: chunks.length }, (_, i) => i + 1));
        const back = await store.transact((tx) => readRecordShaped<{ blob: Uint8Array }>(tx, space, ['task', 's']));
        expect(back.shape).toBe(expected);
        expect(Buffer.from(back.value!.blob).equals(blob)).toBe(true);
      }
    });

    it('orders tuple keys as their parts order, numbers before strings', async () => {
      const { store } = handle();
      const history = tenantKeyspace('conformance').history;
      await store.transact(async (tx) => {
        for (const seq of [10, 2, 300, 1]) tx.set(history.pack('t', seq), Buffer.from(String(seq)));
      });
      const rows = await store.transact((tx) => tx.getPrefix(history.pack('t'), { reverse: true }));
      expect(rows.map((row) => history.unpack(row.key)[1])).toEqual([300, 10, 2, 1]);
    });

    it('keeps tenants apart: one tenant range never holds another tenant key', async () => {
      const { store } = handle();
      const a = tenantKeyspace('a');
      const ab = tenantKeyspace('ab');
      await store.transact(async (tx) => {
        await writeRecord(tx, a.tasks, ["t"], { tenant: "a" });
        await writeRecord(tx, ab.tasks, ["t"], { tenant: "ab" });
      });
      const rows = await store.transact((tx) => tx.getPrefix(a.root.prefix));
      expect(rows).toHaveLength(1);
    });
  });
}

/** `tx`, counting the reads made through it. */
function countingReads(tx: Transaction): { tx: Transaction; reads: () => number } {
  let reads = 0;
  const counted = new Proxy(tx, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (name === 'get' || name === 'getRange' || name === 'getPrefix') {
        return (...args: unknown[]) => {
          reads += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { tx: counted, reads: () => reads };
}
