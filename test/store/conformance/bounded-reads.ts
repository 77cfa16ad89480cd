import { describe, expect, it } from 'vitest';
import { Repository, READ_BUDGET } from '../../../src/service/repository/repository.js';
import { tenantKeyspace, writeNewRecord } from '../../../src/store/keyspace.js';
import { STORE_LIMITS, type FinishedTransaction } from '../../../src/store/store.js';
import type { StoreInitializer } from './initializer.js';
import { freshStore } from './helpers.js';

const TENANT = 'conformance';
const CHECKPOINT = 'cp-many-versions';
const VERSIONS = 100_000;
/** Records one writing transaction carries: about 0.6 MB, well inside 10 MB. */
const WRITE_BATCH = 10_000;

export function boundedReadsSpec(init: StoreInitializer): void {
  describe('a listing of 100,000 revisions', () => {
    const finished: FinishedTransaction[] = [];
    const handle = freshStore(init, { onTransaction: (done) => finished.push(done) });

    it('answers in pages, each one transaction within the read budget, and lists every version once in order', async () => {
      const { store } = handle();
      const revisions = tenantKeyspace(TENANT).revisions;
      for (let from = 1; from <= VERSIONS; from += WRITE_BATCH) {
        await store.transact(async (tx) => {
          for (let version = from; version < from + WRITE_BATCH; version++) writeNewRecord(tx, revisions, [CHECKPOINT, version], { c: `v${version}`, h: '' });
        });
      }
      finished.length = 0;

      const listed: number[] = [];
      let after: number | undefined;
      let pages = 0;
      for (let done = false; !done; pages++) {
        const page = await store.transact((tx) => new Repository(tx, TENANT).checkpoints.revisionPage(CHECKPOINT, after, VERSIONS, new Repository(tx, TENANT).budget()), { readOnly: true });
        listed.push(...page.entries.map((entry) => entry.version));
        expect(page.entries.every((entry) => entry.raw?.c === `v${entry.version}`)).toBe(true);
        after = listed[listed.length - 1];
        done = page.done;
        expect(pages).toBeLessThan(VERSIONS);
      }

      expect(listed).toEqual(Array.from({ length: VERSIONS }, (_, i) => i + 1));
      // The budget, not the limit, ended every page but the last.
      expect(pages).toBeGreaterThanOrEqual(VERSIONS / READ_BUDGET.keys);
      expect(finished).toHaveLength(pages);
      for (const read of finished) {
        expect(read.readOnly).toBe(true);
        expect(read.keysRead).toBeLessThanOrEqual(READ_BUDGET.keys);
        expect(read.elapsedMs).toBeLessThan(STORE_LIMITS.transactionMs);
      }
    }, 120_000);
  });
}
