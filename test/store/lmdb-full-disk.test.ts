/**
 * The embedded store on a disk that fills up (`src/store/lmdb.ts`,
 * `recover`): a real LMDB environment on a small tmpfs, with writers side
 * by side until commits fail. Every failure is `no_space` naming the
 * directory, the process survives it, reads go on, and once there is room
 * the next transaction commits without reopening the store; every
 * acknowledged write is there, before and after reopening, and the commit
 * sequence goes on from the last acknowledged commit. As root (to mount the
 * tmpfs); skipped with the reason otherwise.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb.js';
import { StoreError } from '../../src/store/store.js';
import { mountTmpfs, tmpfsSkipReason, type Tmpfs } from '../support/tmpfs.js';

const skip = tmpfsSkipReason();
if (skip !== undefined) console.log(`LMDB full-disk test skipped: ${skip}`);

let mounted: Tmpfs | undefined;
let store: LmdbStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
  mounted?.unmount();
  mounted = undefined;
});

const key = (writer: number, n: number): Buffer => Buffer.from(`w${writer}-${String(n).padStart(6, '0')}`);
const value = (writer: number, n: number): Buffer => Buffer.alloc(3_000, `${writer}:${n};`);

/** A store on a 16 MB tmpfs holding one write, with about 1 MB left: its path. */
async function nearlyFullStore(): Promise<string> {
  mounted = mountTmpfs(16);
  const path = join(mounted.dir, 'data');
  store = LmdbStore.open({ path });
  await store.transact(async (tx) => tx.set(Buffer.from('before'), Buffer.from('yes')));
  mounted.fill(1_000_000);
  return path;
}

/** A write of 2.7 MB under `name`, more than the room {@link nearlyFullStore} leaves. */
function tooLargeWrite(name: string): Promise<void> {
  return store!.transact(
    async (tx) => {
      for (let n = 0; n < 30; n++) tx.set(Buffer.from(`${name}-${n}`), Buffer.alloc(90_000, n));
    },
    { maxRetries: 0 },
  );
}

describe.skipIf(skip !== undefined)('LMDB on a full disk', () => {
  it('fails commits with no_space naming the directory, keeps reading, and commits again once there is room', { timeout: 120_000 }, async () => {
    mounted = mountTmpfs(16);
    const path = join(mounted.dir, 'data');
    store = LmdbStore.open({ path });
    await store.transact(async (tx) => tx.setStamped(Buffer.from('stamped-'), Buffer.alloc(0), Buffer.from('before')));
    mounted.fill(1_000_000);

    const acknowledged: Buffer[] = [];
    const failures: unknown[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, writer) => {
        for (let n = 0, failed = 0; failed < 3 && n < 2_000; n++) {
          try {
            await store!.transact(async (tx) => tx.set(key(writer, n), value(writer, n)), { maxRetries: 0 });
            acknowledged.push(key(writer, n));
          } catch (error) {
            failures.push(error);
            failed++;
          }
        }
      }),
    );
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(StoreError);
      expect(failure).toMatchObject({ code: 'no_space', retriable: false });
      expect((failure as StoreError).message).toContain(path);
    }

    // Reads go on while the disk is full.
    const read = async (keys: Buffer[]): Promise<number> => store!.transact(async (tx) => (await Promise.all(keys.map((k) => tx.get(k)))).filter((v) => v !== undefined).length, { readOnly: true });
    expect(await read(acknowledged)).toBe(acknowledged.length);

    mounted.free();
    await store.transact(async (tx) => tx.set(Buffer.from('after-room'), Buffer.from('yes')));
    expect(await read([...acknowledged, Buffer.from('after-room')])).toBe(acknowledged.length + 1);
    // The next commit follows the last acknowledged one: its stamp sorts after every earlier stamp.
    await store.transact(async (tx) => tx.setStamped(Buffer.from('stamped-'), Buffer.alloc(0), Buffer.from('after')));

    await store.close();
    store = LmdbStore.open({ path });
    expect(await read([...acknowledged, Buffer.from('after-room')])).toBe(acknowledged.length + 1);
    const stamps = await store.transact(async (tx) => tx.getPrefix(Buffer.from('stamped-')), { readOnly: true });
    expect(stamps.map((entry) => entry.value.toString())).toEqual(['before', 'after']);
    console.log(`LMDB full disk: ${acknowledged.length} commits acknowledged, ${failures.length} refused as no_space, all there after the room was made and after reopening`);
  });

  it('runs a background body on durable state only: a commit refused for want of room beside it stops nothing', { timeout: 60_000 }, async () => {
    await nearlyFullStore();
    // A write too large for the room left, handed to LMDB and not yet durable when the background body starts.
    const tooLarge = tooLargeWrite('too-large');
    // The indexer's merge on the event loop is such a body: it reads what creates wrote, then writes, in a later turn
    // of the event loop than the write before it (so in an LMDB transaction of its own).
    const background = store!.transact(
      async (tx) => {
        const seen = await tx.get(Buffer.from('too-large-0'));
        await new Promise((resolve) => setImmediate(resolve));
        tx.set(Buffer.from('background'), Buffer.from(seen === undefined ? 'absent' : `seen ${seen.length}`));
      },
      { background: true, maxRetries: 0 },
    );
    await expect(tooLarge).rejects.toMatchObject({ code: 'no_space' });
    await background;

    // Had the background body read the refused write and landed, the store would now refuse every write until a restart.
    await store!.transact(async (tx) => tx.set(Buffer.from('after'), Buffer.from('yes')), { maxRetries: 0 });
    const read = async (k: string): Promise<string | undefined> => store!.transact(async (tx) => (await tx.get(Buffer.from(k)))?.toString(), { readOnly: true });
    expect(await read('background')).toBe('absent');
    expect(await read('too-large-0')).toBeUndefined();
    expect(await read('after')).toBe('yes');
  });

  it('settles every commit when a large one is refused and small ones follow it a turn later: none waits forever', { timeout: 120_000 }, async () => {
    const path = await nearlyFullStore();
    // The small write is handed over in the same turn as the large one, a turn of the event loop later, or after a timer.
    const turns: (() => Promise<unknown>)[] = [async () => undefined, () => new Promise((resolve) => setImmediate(resolve)), () => new Promise((resolve) => setTimeout(resolve, 1))];
    const landed: string[] = [];
    for (let round = 0; round < 30; round++) {
      const turn = turns[round % turns.length]!;
      const large = tooLargeWrite(`large-${round}`);
      const small = store!.transact(
        async (tx) => {
          await turn();
          tx.set(Buffer.from(`small-${round}`), Buffer.from('x'));
        },
        { maxRetries: 0 },
      );
      // lmdb-js leaves the cause of the later of two failed commits it reports together unsettled; the commit's own outcome may not wait on it.
      const outcomes = await Promise.race([Promise.allSettled([large, small]), new Promise<'waiting'>((resolve) => setTimeout(resolve, 10_000, 'waiting'))]);
      expect(outcomes, `round ${round}`).not.toBe('waiting');
      const [first, second] = outcomes as PromiseSettledResult<void>[];
      expect(first).toMatchObject({ status: 'rejected', reason: { code: 'no_space' } });
      if (second!.status === 'rejected') expect(second!.reason).toMatchObject({ code: 'no_space', message: expect.stringContaining(path) });
      else landed.push(`small-${round}`);
    }

    // The store was never stopped: a small write lands, and every small write that was acknowledged is there.
    await store!.transact(async (tx) => tx.set(Buffer.from('after'), Buffer.from('yes')), { maxRetries: 0 });
    const present = await store!.transact(async (tx) => (await Promise.all([...landed, 'after'].map((k) => tx.get(Buffer.from(k))))).filter((v) => v !== undefined).length, { readOnly: true });
    expect(present).toBe(landed.length + 1);
  });

  it('does the same for a lone writer whose commits run on the calling thread (commitInline)', { timeout: 120_000 }, async () => {
    mounted = mountTmpfs(16);
    const path = join(mounted.dir, 'data');
    store = LmdbStore.open({ path });
    store.commitInline(() => true);
    await store.transact(async (tx) => tx.set(Buffer.from('before'), Buffer.from('yes')));
    mounted.fill(1_000_000);

    const acknowledged: Buffer[] = [Buffer.from('before')];
    const failures: unknown[] = [];
    for (let n = 0; failures.length < 3 && n < 8_000; n++) {
      try {
        await store.transact(async (tx) => tx.set(key(0, n), value(0, n)), { maxRetries: 0 });
        acknowledged.push(key(0, n));
      } catch (error) {
        failures.push(error);
      }
    }
    expect(acknowledged.length).toBeGreaterThan(1);
    expect(failures.length).toBe(3);
    for (const failure of failures) expect(failure).toMatchObject({ code: 'no_space', retriable: false, message: expect.stringContaining(path) });

    const read = async (keys: Buffer[]): Promise<number> => store!.transact(async (tx) => (await Promise.all(keys.map((k) => tx.get(k)))).filter((v) => v !== undefined).length, { readOnly: true });
    expect(await read(acknowledged)).toBe(acknowledged.length);
    mounted.free();
    await store.transact(async (tx) => tx.set(Buffer.from('after-room'), Buffer.from('yes')));
    await store.close();
    store = LmdbStore.open({ path });
    expect(await read([...acknowledged, Buffer.from('after-room')])).toBe(acknowledged.length + 1);
  });
});
