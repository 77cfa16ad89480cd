/**
 * A caller's write over FoundationDB reads, on its first attempt, at the
 * client's cached read version (`USE_GRV_CACHE`, `src/store/fdb.ts`): one
 * round trip fewer for a lone create. What a user checks is that no answer
 * comes from a state older than a write another instance acknowledged: a
 * write that reads behind commits only if nothing it read changed, and one
 * that commits nothing (found nothing to do, or refused) is run again at a
 * read version the cluster gives.
 *
 * Two instances are two database handles: a copy of the cluster file opens
 * a second one, with its own cache, as a second process would. Needs
 * FDB_CLUSTER_FILE; otherwise skipped (BATON_REQUIRE_FDB=1 fails instead).
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics.js';
import { runTransaction } from '../../src/service/transactions.js';
import { FdbStore } from '../../src/store/fdb.js';
import { fdbClusterFile } from '../support/fdb-cluster.js';

const clusterFile = await fdbClusterFile();
const runs = clusterFile !== undefined;

const key = (name: string): Buffer => Buffer.from(name);
const text = (value: Buffer | undefined): string | undefined => value?.toString();

class Refused extends Error {}

describe.runIf(runs)('a write over FoundationDB read at the cached read version', () => {
  const prefix = `test-grv-${randomUUID()}`;
  let dir: string;
  let here: FdbStore;
  let other: FdbStore;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-grv-'));
    const copy = join(dir, 'other.cluster');
    copyFileSync(clusterFile!, copy);
    here = await FdbStore.open({ clusterFile: clusterFile!, prefix });
    other = await FdbStore.open({ clusterFile: copy, prefix });
  });
  afterAll(async () => {
    await here?.transact(async (tx) => tx.clearPrefix(Buffer.alloc(0)));
    await Promise.all([here?.close(), other?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** `k` written here (this handle's cache now holds that commit's version), then by the other instance. */
  async function writtenElsewhere(name: string): Promise<void> {
    await here.transact(async (tx) => tx.set(key(name), key('here')));
    await other.transact(async (tx) => tx.set(key(name), key('other')));
  }

  it('commits a write made from what it read only once nothing it read has changed since', async () => {
    await writtenElsewhere('derived');
    const seen: (string | undefined)[] = [];
    await here.transact(async (tx) => {
      const value = text(await tx.get(key('derived')));
      seen.push(value);
      tx.set(key('derived copy'), key(`copy of ${value}`));
    });
    expect(text(await here.transact((tx) => tx.get(key('derived copy')), { readOnly: true }))).toBe('copy of other');
    // A first attempt that read behind (the cache, unless its updater ran meanwhile) did not land.
    expect(seen.at(-1)).toBe('other');
  });

  it('retries a conflict, in the service as in the store, at a read version the cluster gives', async () => {
    await writtenElsewhere('runner');
    const seen: (string | undefined)[] = [];
    // The service's runner asks the store for no retries of its own and runs the body again itself.
    await runTransaction({ store: here, metrics: createMetrics(), transactionDeadlineMs: 5_000 }, async (tx) => {
      const value = text(await tx.get(key('runner')));
      seen.push(value);
      tx.set(key('runner copy'), key(`copy of ${value}`));
    });
    expect(text(await here.transact((tx) => tx.get(key('runner copy')), { readOnly: true }))).toBe('copy of other');
    // At most the one attempt that read behind, then one at a fresh version: not one a backoff until the cache ages.
    expect(seen.length).toBeLessThanOrEqual(2);
  });

  it('runs a write that conflicted at the cached read version again at once, not after the runner backs off', async () => {
    await writtenElsewhere('conflicted');
    const metrics = createMetrics();
    let attempts = 0;
    await runTransaction({ store: here, metrics, transactionDeadlineMs: 5_000 }, async (tx) => {
      attempts += 1;
      // The other instance writes the key this attempt read, while the attempt is under way: its commit conflicts.
      const value = text(await tx.get(key('conflicted')));
      if (attempts === 1) await other.transact(async (t) => t.set(key('conflicted'), key('other again')));
      tx.set(key('conflicted copy'), key(`copy of ${value}`));
    });
    expect(text(await here.transact((tx) => tx.get(key('conflicted copy')), { readOnly: true }))).toBe('copy of other again');
    expect(attempts).toBe(2);
    // The runner saw no conflict: it neither retried nor slept.
    const retries = (await metrics.storeRetries.get()).values.reduce((sum, v) => sum + v.value, 0);
    expect(retries).toBe(0);
  });

  it('answers a write that commits nothing from a read version the cluster gives', async () => {
    await writtenElsewhere('nothing to do');
    const answer = await here.transact(async (tx) => text(await tx.get(key('nothing to do'))));
    expect(answer).toBe('other');
  });

  it('runs a write refused on what it read again at a fresh read version', async () => {
    await writtenElsewhere('if match');
    const seen: (string | undefined)[] = [];
    const answer = await here.transact(async (tx) => {
      const value = text(await tx.get(key('if match')));
      seen.push(value);
      // As a create whose If-Match names the version another instance just wrote.
      if (value !== 'other') throw new Refused(`the version is ${value}`);
      tx.set(key('if match'), key('next'));
      return value;
    });
    expect(answer).toBe('other');
    expect(seen.at(-1)).toBe('other');
    expect(text(await other.transact((tx) => tx.get(key('if match')), { readOnly: true }))).toBe('next');
  });

  it('refuses for good when the refusal holds at a fresh read version too', async () => {
    await writtenElsewhere('refused');
    await expect(
      here.transact(async (tx) => {
        throw new Refused(`still ${text(await tx.get(key('refused')))}`);
      }),
    ).rejects.toThrow('still other');
  });

  it('reads a read-only transaction at a fresh read version, always', async () => {
    await writtenElsewhere('read only');
    expect(text(await here.transact((tx) => tx.get(key('read only')), { readOnly: true }))).toBe('other');
  });
});
