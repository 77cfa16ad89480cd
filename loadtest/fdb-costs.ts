/**
 * What a transaction's parts cost a FoundationDB cluster on this machine:
 * transactions of point reads and sets in the shapes a create and the
 * floor route make, each shape a closed loop of BENCH_FDB_COST_TRANSACTIONS
 * (default 3,000) at 64 in flight through the store port (`FdbStore`), and
 * the CPU every `fdbserver` on this machine used for them (2 s after the
 * loop included: the cluster writes the data out after it commits). So a
 * create's count of reads and keys (`npm run bench:txsize` with
 * BATON_STORE=fdb) can be priced: which to cut first.
 *
 *   FDB_CLUSTER_FILE=/path/fdb.cluster npm run bench:fdbcosts
 *
 * Without FDB_CLUSTER_FILE, or with no `fdbserver` on this machine (a
 * cluster elsewhere: its CPU cannot be read from here), it prints "skipped"
 * and why. Keys go under a fresh prefix, cleared at the end. Nothing here
 * asserts on time.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { runMain } from './lib/cleanup.js';
import { envNumber } from './lib/env.js';
import { cpuMeter, watchCluster } from './lib/proc.js';

const TRANSACTIONS = envNumber('BENCH_FDB_COST_TRANSACTIONS', 3_000, false);
const IN_FLIGHT = 64;
const PRELOADED = 1_000;

/** A transaction's shape: point reads of preloaded keys, then sets of new keys sharing `bytes`. */
interface Shape {
  name: string;
  reads: number;
  sets: number;
  bytes: number;
}

const SHAPES: Shape[] = [
  { name: "1 set of 3 KB (the floor route's)", reads: 0, sets: 1, bytes: 3_000 },
  { name: '12 sets, 6 KB', reads: 0, sets: 12, bytes: 6_000 },
  { name: '36 sets, 10 KB', reads: 0, sets: 36, bytes: 10_000 },
  { name: '4 reads + 1 set of 3 KB', reads: 4, sets: 1, bytes: 3_000 },
  { name: '8 reads + 1 set of 3 KB', reads: 8, sets: 1, bytes: 3_000 },
  { name: '6 reads + 36 sets, 10 KB', reads: 6, sets: 36, bytes: 10_000 },
];

async function main(): Promise<void> {
  const clusterFile = process.env.FDB_CLUSTER_FILE;
  if (!clusterFile) {
    console.log('bench:fdbcosts skipped: it prices transactions on a FoundationDB cluster; set FDB_CLUSTER_FILE to a reachable cluster on this machine to run it');
    return;
  }
  const servers = watchCluster();
  if (servers === 0) {
    console.log('bench:fdbcosts skipped: no fdbserver process runs on this machine, so the cluster\'s CPU cannot be read here');
    return;
  }
  const { FdbStore } = await import('../src/store/fdb.js');
  const store = await FdbStore.open({ clusterFile, prefix: `fdbcosts-${Date.now()}-${process.pid}/` });
  const key = (...parts: (string | number)[]): Buffer => Buffer.from(parts.join('/'));
  try {
    for (let from = 0; from < PRELOADED; from += 100) {
      await store.transact(async (tx) => {
        for (let i = from; i < from + 100; i++) tx.set(key('r', i), Buffer.alloc(300, 120));
      });
    }
    console.log(`bench:fdbcosts: ${TRANSACTIONS} transactions a shape, ${IN_FLIGHT} in flight, ${servers} fdbserver process(es) on this machine (${clusterFile})`);
    console.log('shape                                       tx/s   cluster CPU µs/tx   client CPU µs/tx');
    for (const [s, shape] of SHAPES.entries()) {
      // The last shape's data written out first.
      await sleep(3_000);
      const meter = cpuMeter(process.pid);
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < TRANSACTIONS) {
            const n = next++;
            await store.transact(async (tx) => {
              await Promise.all(Array.from({ length: shape.reads }, (_, r) => tx.get(key('r', (n * 7 + r) % PRELOADED))));
              const value = Buffer.alloc(Math.floor(shape.bytes / shape.sets), 120);
              for (let i = 0; i < shape.sets; i++) tx.set(key('w', s, n, i), value);
            });
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      await sleep(2_000);
      const cpu = meter(TRANSACTIONS);
      console.log(`${shape.name.padEnd(40)} ${(TRANSACTIONS / seconds).toFixed(0).padStart(7)} ${(cpu.clusterUsPerReq ?? NaN).toFixed(0).padStart(19)} ${cpu.serverUsPerReq.toFixed(0).padStart(18)}`);
    }
  } finally {
    await store.transact(async (tx) => tx.clearPrefix(Buffer.alloc(0))).catch(() => undefined);
    await store.close();
  }
}

runMain(main, async () => undefined);
