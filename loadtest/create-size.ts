/**
 * What one create writes: keys and bytes of its transaction, as
 * FoundationDB counts a commit's size (every mutation's key and value, each
 * written key once more for its conflict range: `TransactionStats`), and the
 * reads it makes (point and range: over FoundationDB each a request to a
 * storage server), and, since the full-text index moved to a pending list,
 * what the indexer's merge writes and reads per checkpoint it merges (over
 * LMDB the merge thread writes in a lent environment, which this count does
 * not see: its line is absent there). In process, through the service
 * (`createCheckpoint`, the create route's command), evolving and same-text
 * bodies (`http-payloads.ts`), over LMDB in a temp dir or, with
 * BATON_STORE=fdb and FDB_CLUSTER_FILE, over FoundationDB under a fresh
 * prefix. Nothing timed.
 *
 *   npm run bench:txsize
 *
 * A merge runs after every round of one create per task, so each merge
 * takes one entry of each task: the least a batch saves.
 *
 * Environment: BENCH_TXSIZE_CREATES (default 3,000, over 100 tasks).
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCheckpoint } from '../src/service/checkpoint-writes.js';
import type { ServiceContext } from '../src/service/context.js';
import { standaloneContext } from '../src/service/standalone.js';
import { LmdbStore } from '../src/store/lmdb.js';
import type { Store, Transaction } from '../src/store/store.js';
import { EvolvingBodies, checkpointBody } from './lib/http-payloads.js';
import { createCommand } from './lib/scale-load.js';

const CREATES = Number(process.env.BENCH_TXSIZE_CREATES ?? 3_000);
const TASKS = 100;

interface Tally {
  transactions: number;
  keysSet: number;
  keysCleared: number;
  bytes: number;
  /** Point reads (`get`): over FoundationDB each a request to a storage server. */
  gets: number;
  /** Range reads (`getRange`, `getPrefix`). */
  ranges: number;
}

const empty = (): Tally => ({ transactions: 0, keysSet: 0, keysCleared: 0, bytes: 0, gets: 0, ranges: 0 });

type Count = { set: number; cleared: number; gets: number; ranges: number };

/** Counts the mutations of each committed write transaction into the tally `current()` names. */
function counting(store: Store, current: () => Tally): Store {
  const wrap = (tx: Transaction, count: Count): Transaction =>
    new Proxy(tx, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        // Every mutation that writes a key: plain sets, stamped keys (events) and atomic adds (the event clock), and a
        // set unless held where it is a blind set (FoundationDB; LMDB writes it only when the key is absent, seldom).
        if (name === 'set' || name === 'setBlind' || name === 'setStamped' || name === 'add' || (name === 'setUnlessHeld' && target.shared === true))
          return (...args: unknown[]) => {
            count.set += 1;
            return (value as (...a: unknown[]) => void).apply(target, args);
          };
        if (name === 'get' || name === 'getRange' || name === 'getPrefix')
          return (...args: unknown[]) => {
            if (name === 'get') count.gets += 1;
            else count.ranges += 1;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        if (name === 'clear' || name === 'clearBlind' || name === 'clearRange' || name === 'clearPrefix')
          return (...args: unknown[]) => {
            count.cleared += 1;
            return (value as (...a: unknown[]) => void).apply(target, args);
          };
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  return new Proxy(store, {
    get(target, name, receiver) {
      if (name !== 'transact') return Reflect.get(target, name, receiver) as unknown;
      return async <T>(body: (tx: Transaction) => Promise<T>, options?: { readOnly?: boolean }) => {
        let last = { set: 0, cleared: 0, gets: 0, ranges: 0, bytes: 0 };
        const result = await target.transact(async (tx: Transaction) => {
          const count: Count = { set: 0, cleared: 0, gets: 0, ranges: 0 };
          const out = await body(wrap(tx, count));
          last = { ...count, bytes: tx.stats().bytesWritten };
          return out;
        }, options);
        if (last.set + last.cleared > 0) {
          const tally = current();
          tally.transactions += 1;
          tally.keysSet += last.set;
          tally.keysCleared += last.cleared;
          tally.bytes += last.bytes;
          tally.gets += last.gets;
          tally.ranges += last.ranges;
        }
        return result;
      };
    },
  });
}

async function openBase(): Promise<{ store: Store; close: () => Promise<void> }> {
  if (process.env.BATON_STORE === 'fdb') {
    const { FdbStore } = await import('../src/store/fdb.js');
    const store = await FdbStore.open({ clusterFile: process.env.FDB_CLUSTER_FILE, prefix: `txsize-${Date.now()}-${process.pid}` });
    return { store, close: () => store.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'baton-txsize-'));
  const store = LmdbStore.open({ path: dir });
  return {
    store,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Merges whatever the build leaves pending, if it has an indexer (a build before the pending list has none). */
async function mergeAll(ctx: ServiceContext): Promise<void> {
  // Named at run time: a build without the pending list has no such module.
  const module = '../src/service/indexer/indexer.js';
  const indexer = (await import(module).catch(() => undefined)) as { Indexer: new (ctx: ServiceContext, delayMs: number) => { start(): void; settle(): Promise<void>; stop(): Promise<void> } } | undefined;
  if (indexer === undefined) return;
  const running = new indexer.Indexer(ctx, 0);
  running.start();
  await running.settle();
  await running.stop();
}

async function measure(kind: 'evolving' | 'same'): Promise<void> {
  const base = await openBase();
  let tally = empty();
  const store = counting(base.store, () => tally);
  const ctx = standaloneContext(store);
  const bodies = new EvolvingBodies(7);
  // Each task's first create is a task's first; measured from the second round on, as a running agent's creates are.
  for (let i = 0; i < TASKS; i++) await createCheckpoint(ctx, createCommand(ctx, kind === 'evolving' ? bodies.next(`task-${i}`, i) : checkpointBody(`task-${i}`, i)));
  await mergeAll(ctx);
  const creates = empty();
  const merges = empty();
  // A merge after every round of one create per task: each task's entries merged one at a time, the least a batch saves.
  for (let i = TASKS; i < CREATES; i++) {
    const task = `task-${i % TASKS}`;
    tally = creates;
    await createCheckpoint(ctx, createCommand(ctx, kind === 'evolving' ? bodies.next(task, i) : checkpointBody(task, i)));
    if ((i + 1) % TASKS === 0) {
      tally = merges;
      await mergeAll(ctx);
    }
  }
  const n = CREATES - TASKS;
  const per = (t: Tally) =>
    `${(t.keysSet / n).toFixed(1)} set + ${(t.keysCleared / n).toFixed(1)} cleared keys, ${Math.round(t.bytes / n)} bytes, ${(t.gets / n).toFixed(1)} point + ${(t.ranges / n).toFixed(2)} range reads`;
  console.log(`${kind.padEnd(8)} ${process.env.BATON_STORE === 'fdb' ? 'fdb ' : 'lmdb'}  create transaction: ${per(creates)} (${creates.transactions} transactions)`);
  if (merges.transactions > 0) console.log(`${''.padEnd(14)}merge, per checkpoint: ${per(merges)} (${merges.transactions} merge transactions for ${n} checkpoints)`);
  await base.close();
}

await measure('evolving');
await measure('same');
