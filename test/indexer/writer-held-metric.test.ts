/**
 * `indexer_writer_held_ms`: over LMDB each merge the indexer's threads
 * commit holds the store's single writer, and no create commits meanwhile
 * (`store/lmdb.ts`, `lendWriter`); the histogram says how long, so that an
 * operator who sees a create wait can tell whether it waited behind a
 * merge. Over the API with the app's own indexer and its merge thread, on a
 * real LMDB store whatever store the suite runs on (only LMDB lends its
 * writer): no hold before any create, then one a merge, each as long as its
 * commit took.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { MERGE_THREAD } from '../../src/service/indexer/merge-thread.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { auth, checkpointBody, TOKENS } from '../support/app.js';

let dir: string;
let store: LmdbStore;
let app: FastifyInstance;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'baton-writer-held-'));
  const config = configSchema.parse({ dataDir: dir, tokens: `writer:${TOKENS.writer},admin:${TOKENS.admin}`, logLevel: 'silent', indexerDelayMs: 0 });
  store = LmdbStore.open({ path: dir });
  app = await buildApp({ config, store, eventPollMs: 100 });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Held {
  count: number;
  sumMs: number;
  /** Cumulative counts by upper bound, as Prometheus reads them. */
  buckets: Map<string, number>;
  merged: number;
}

async function scrape(): Promise<Held> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers: auth('admin') });
  expect(res.statusCode, res.body).toBe(200);
  const value = (pattern: RegExp): number => Number(pattern.exec(res.body)?.[1] ?? NaN);
  const buckets = new Map([...res.body.matchAll(/^indexer_writer_held_ms_bucket\{le="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
  return {
    count: value(/^indexer_writer_held_ms_count (\d+)$/m),
    sumMs: value(/^indexer_writer_held_ms_sum (\S+)$/m),
    buckets,
    merged: value(/^indexer_merged_total (\d+)$/m),
  };
}

it('counts one hold of the writer a merge, each as long as its commit took, and none before a create', async () => {
  const before = await scrape();
  expect(before.count).toBe(0);
  expect(before.buckets.get('+Inf')).toBe(0);

  for (let i = 0; i < 6; i++) {
    const res = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(`held-${i % 2}`, { executionState: { completedItems: [`ptarmigan step ${i}`] } }) });
    expect(res.statusCode, res.body).toBe(201);
  }
  let after = await scrape();
  for (let i = 0; i < 200 && after.merged < 6; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    after = await scrape();
  }
  expect(after.merged).toBe(6);
  // The merges went through the thread that borrows the writer, not the event loop's own transaction.
  expect(MERGE_THREAD.available).toBe(true);
  expect(after.count).toBeGreaterThanOrEqual(1);
  expect(after.count).toBeLessThanOrEqual(6);
  expect(after.sumMs).toBeGreaterThan(0);
  // Every hold lies in some bucket, and the buckets are cumulative.
  expect(after.buckets.get('+Inf')).toBe(after.count);
  const counts = [...after.buckets.values()];
  expect(counts).toEqual([...counts].sort((a, b) => a - b));
});
