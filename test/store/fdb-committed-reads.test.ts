/**
 * A caller's write over FoundationDB reads, on its first attempt, the keys
 * its process's last commits read, at their commit's version, without
 * asking the cluster (`src/store/fdb-committed.ts`): a lone agent's create
 * waits for its commit alone. What a user checks: every write still lands
 * on the newest state, whichever instance wrote it (no lost update, no write
 * derived from a value another instance had replaced), and what a commit
 * leaves behind is recorded exactly (its own writes, a range it cleared, an
 * atomic add). The store's count of reads answered so (`readsFromCommits`,
 * in its transaction hook) shows the path was taken.
 *
 * Two instances are two database handles, as in `fdb-read-version.test.ts`.
 * Needs FDB_CLUSTER_FILE; otherwise skipped (BATON_REQUIRE_FDB=1 fails instead).
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics.js';
import { runTransaction } from '../../src/service/transactions.js';
import { FdbStore } from '../../src/store/fdb.js';
import { fdbClusterFile } from '../support/fdb-cluster.js';
import type { FinishedTransaction } from '../../src/store/store.js';

const clusterFile = await fdbClusterFile();
const runs = clusterFile !== undefined;

const key = (name: string): Buffer => Buffer.from(name);
const text = (value: Buffer | undefined): string | undefined => value?.toString();
const count = (value: Buffer | undefined): number => (value === undefined ? 0 : Number(value.toString()));

describe.runIf(runs)('a write over FoundationDB reading what its last commits read', () => {
  const prefix = `test-committed-${randomUUID()}`;
  let dir: string;
  let here: FdbStore;
  let other: FdbStore;
  const attempts: FinishedTransaction[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-committed-'));
    const copy = join(dir, 'other.cluster');
    copyFileSync(clusterFile!, copy);
    // The record is read however long ago the cluster last answered (2 ms by default, which a slow test step may pass).
    here = await FdbStore.open({ clusterFile: clusterFile!, prefix, hooks: { onTransaction: (done) => attempts.push(done) }, committedReads: { quietMs: 60_000 } });
    other = await FdbStore.open({ clusterFile: copy, prefix });
  });
  beforeEach(() => {
    attempts.length = 0;
  });
  afterAll(async () => {
    await here?.transact(async (tx) => tx.clearPrefix(Buffer.alloc(0)));
    await Promise.all([here?.close(), other?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Adds one to a counter kept as text, as a create moves its task's head on: a read, then a write of what it read. */
  const increment = (store: FdbStore, name: string) =>
    store.transact(async (tx) => {
      const next = count(await tx.get(key(name))) + 1;
      tx.set(key(name), key(String(next)));
      return next;
    });

  it('reads a key its last commit read from that commit, and lands on the value it wrote there', async () => {
    expect(await increment(here, 'alone')).toBe(1);
    attempts.length = 0;
    expect(await increment(here, 'alone')).toBe(2);
    expect(await increment(here, 'alone')).toBe(3);
    expect(attempts.map((a) => [a.readsFromCommits, a.committed])).toEqual([
      [1, true],
      [1, true],
    ]);
    expect(count(await other.transact((tx) => tx.get(key('alone')), { readOnly: true }))).toBe(3);
  });

  it('loses no update another instance made since: the write that read behind is run again on the newest value', async () => {
    await increment(here, 'shared');
    await increment(other, 'shared');
    attempts.length = 0;
    expect(await increment(here, 'shared')).toBe(3);
    // The attempt that read the value of this instance's last commit conflicted; the next read the cluster's.
    expect(attempts.map((a) => [a.readsFromCommits, a.committed])).toEqual([
      [1, false],
      [0, true],
    ]);
    expect(count(await other.transact((tx) => tx.get(key('shared')), { readOnly: true }))).toBe(3);
  });

  it('derives nothing from a value another instance removed since', async () => {
    await increment(here, 'removed');
    await other.transact(async (tx) => tx.clear(key('removed')));
    const copied = await here.transact(async (tx) => {
      const value = text(await tx.get(key('removed')));
      tx.set(key('removed copy'), key(`copy of ${value}`));
      return value;
    });
    expect(copied).toBeUndefined();
    expect(text(await other.transact((tx) => tx.get(key('removed copy')), { readOnly: true }))).toBe('copy of undefined');
  });

  it('answers a write that read behind and wrote nothing from a read version the cluster gives', async () => {
    await increment(here, 'nothing');
    await increment(other, 'nothing');
    attempts.length = 0;
    // A write that finds nothing to do (as an update whose fields are already so) commits nothing: its answer must be fresh.
    const seen = await here.transact(async (tx) => count(await tx.get(key('nothing'))));
    expect(seen).toBe(2);
    expect(attempts[0]!.readsFromCommits).toBe(1);
  });

  it('records a key its commit cleared by range after reading it as absent, not as read', async () => {
    await here.transact(async (tx) => {
      await tx.get(key('range/a'));
      tx.set(key('range/a'), key('written'));
    });
    await here.transact(async (tx) => {
      expect(text(await tx.get(key('range/a')))).toBe('written');
      tx.clearRange(key('range/'), key('range0'));
      tx.set(key('range marker'), key('1'));
    });
    attempts.length = 0;
    const after = await here.transact(async (tx) => {
      const value = text(await tx.get(key('range/a')));
      tx.set(key('range marker'), key('2'));
      return value;
    });
    expect(after).toBeUndefined();
    expect(attempts.map((a) => [a.readsFromCommits, a.committed])).toEqual([[1, true]]);
  });

  it('keeps the bytes a commit wrote and read, whatever its caller does with its buffers after', async () => {
    await here.transact(async (tx) => {
      await tx.get(key('buffers'));
      // A value written from a buffer its writer reuses at once (as an encoder's scratch buffer is).
      const scratch = Buffer.from('first');
      tx.set(key('buffers'), scratch);
      scratch.write('XXXXX');
    });
    const read = await here.transact(async (tx) => {
      const value = (await tx.get(key('buffers')))!;
      const seen = value.toString();
      // A reader that changes the buffer it was given.
      value.write('YYYYY');
      tx.set(key('buffers marker'), key('1'));
      return seen;
    });
    expect(read).toBe('first');
    attempts.length = 0;
    expect(text(await here.transact(async (tx) => {
      const value = await tx.get(key('buffers'));
      tx.set(key('buffers marker'), key('2'));
      return value;
    }))).toBe('first');
    expect(attempts.map((a) => [a.readsFromCommits, a.committed])).toEqual([[1, true]]);
  });

  it('reads a key its commit changed by an atomic add from the cluster', async () => {
    await here.transact(async (tx) => {
      await tx.get(key('added'));
      tx.add(key('added'), 5);
    });
    attempts.length = 0;
    const value = await here.transact(async (tx) => {
      const read = await tx.get(key('added'));
      tx.set(key('added marker'), key('1'));
      return read;
    });
    expect(value?.readBigInt64LE(0)).toBe(5n);
    expect(attempts[0]!.readsFromCommits).toBe(0);
  });

  it('reads the keys a write asks for side by side from the one commit that read them all', async () => {
    // As a create reads its tenant's header, its task's head and the settings together: the task's last create read all
    // three, and creates of other tasks since read the header and the settings at newer versions.
    const together = async (task: string) =>
      here.transact(async (tx) => {
        const [, head] = await Promise.all([tx.get(key('header')), tx.get(key(`head/${task}`)), tx.get(key('settings'))]);
        tx.set(key(`head/${task}`), key(String(count(head) + 1)));
        return count(head) + 1;
      });
    await together('a');
    await together('b');
    attempts.length = 0;
    expect(await together('a')).toBe(2);
    expect(attempts.map((a) => [a.readsFromCommits, a.committed])).toEqual([[3, true]]);
  });

  it('stops reading from commits where another instance writes the same keys in turn, and reads as before', async () => {
    // A fleet whose balancer spreads a task's writes over two instances: each write here read behind and ran again.
    const spread = await FdbStore.open({ clusterFile: clusterFile!, prefix, hooks: { onTransaction: (done) => attempts.push(done) }, committedReads: { quietMs: 60_000 } });
    try {
      for (let i = 0; i < 220; i++) {
        await increment(spread, 'spread');
        await increment(other, 'spread');
      }
      attempts.length = 0;
      expect(await increment(spread, 'spread')).toBe(441);
      // Read as before: at the client's cached read version (which the other's write just before may pass), never from a commit.
      expect(attempts.map((a) => a.readsFromCommits)).not.toContain(1);
      expect(attempts.at(-1)!.committed).toBe(true);
    } finally {
      await spread.close();
    }
  });

  it('runs a write again at a fresh version when the commit it read from is older than the cluster keeps', async () => {
    // A process stalled for seconds between two writes of a task: the version recorded has left FoundationDB's window.
    const stalled = await FdbStore.open({ clusterFile: clusterFile!, prefix, hooks: { onTransaction: (done) => attempts.push(done) }, committedReads: { maxAgeMs: 60_000, quietMs: 60_000 } });
    try {
      await increment(stalled, 'stalled');
      await new Promise((resolve) => setTimeout(resolve, 6_500));
      attempts.length = 0;
      // Through the service's runner, which asks the store for no retries of its own.
      const next = await runTransaction({ store: stalled, metrics: createMetrics(), transactionDeadlineMs: 5_000 }, async (tx) => {
        const value = count(await tx.get(key('stalled'))) + 1;
        tx.set(key('stalled'), key(String(value)));
        return value;
      });
      expect(next).toBe(2);
      expect(attempts.map((a) => [a.readsFromCommits, a.committed])).toEqual([
        [1, false],
        [0, true],
      ]);
    } finally {
      await stalled.close();
    }
  }, 20_000);

  it('reads from the cluster, not the record, once the cluster has not answered for a while', async () => {
    // A commit is then not the first thing the cluster hears of the write: cut off by a partition, a read says plainly
    // that nothing was written (the service queues the write), where a commit's outcome would be unknown.
    const quiet = await FdbStore.open({ clusterFile: clusterFile!, prefix, hooks: { onTransaction: (done) => attempts.push(done) } });
    try {
      await increment(quiet, 'quiet');
      await new Promise((resolve) => setTimeout(resolve, 50));
      attempts.length = 0;
      expect(await increment(quiet, 'quiet')).toBe(2);
      expect(attempts.map((a) => [a.readsFromCommits, a.committed])).toEqual([[0, true]]);
    } finally {
      await quiet.close();
    }
  });

    it('reads a read-only transaction from the cluster, never from a commit', async () => {
    await increment(here, 'read only');
    await increment(other, 'read only');
    attempts.length = 0;
    expect(count(await here.transact((tx) => tx.get(key('read only')), { readOnly: true }))).toBe(2);
    expect(attempts[0]!.readsFromCommits ?? 0).toBe(0);
  });
});
