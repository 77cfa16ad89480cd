/**
 * Over LMDB a batch is listed and merged on the merge thread, niced below
 * the event loop, and committed on a thread of its own at the process's
 * priority: while that thread commits, it holds the store's single writer
 * and every create waits for it, so it must not wait for a core behind the
 * process's other threads (`merge-worker.ts`, `docs/performance.md`, issue
 * 44). Over the API, with the app's own indexer: once checkpoints are
 * merged, the process has a thread named `baton-merge` at nice 5 and one
 * named `baton-commit` at the nice value of its main thread, and every
 * checkpoint is found by its words. LMDB only, whatever store the suite runs on: only LMDB lends
 * itself to the merge threads.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { MERGE_THREAD } from '../../src/service/indexer/merge-thread.js';
import { keyspaceOf } from '../../src/service/repository/keyspace.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { auth, checkpointBody, TOKENS } from '../support/app.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The nice value of each of the process's threads named `name` (`/proc/<pid>/task/<tid>/comm`). */
function nicesOf(name: string): number[] {
  const nices: number[] = [];
  for (const tid of readdirSync(`/proc/${process.pid}/task`)) {
    try {
      if (readFileSync(`/proc/${process.pid}/task/${tid}/comm`, 'utf8').trim() !== name) continue;
      nices.push(niceOf(`/proc/${process.pid}/task/${tid}/stat`));
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return nices;
}

/** A thread's nice value: field 19 of its stat, index 16 once the pid and the parenthesised name are cut off. */
function niceOf(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

it.runIf(process.platform === 'linux')('merges on a thread niced below the event loop and commits each merge on one at its priority, every checkpoint found by its words', async () => {
  // As a new process: no merge threads from another test of this file.
  await MERGE_THREAD.close();
  const dir = mkdtempSync(join(tmpdir(), 'baton-merge-priority-'));
  const store = LmdbStore.open({ path: dir });
  const config = configSchema.parse({ dataDir: dir, tokens: `writer:${TOKENS.writer}`, logLevel: 'silent', indexerDelayMs: 0 });
  const app = await buildApp({ config, store, eventPollMs: 100 });
  cleanups.push(async () => {
    await app.close();
    await store.close();
    await MERGE_THREAD.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ids: string[] = [];
  for (let n = 0; n < 6; n++) {
    const res = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(`task-${n % 3}`, { executionState: { completedItems: [`wagtail step ${n}`] } }) });
    expect(res.statusCode, res.body).toBe(201);
    ids.push((res.json() as { id: string }).id);
  }
  const { begin, end } = keyspaceOf('default').pendingList.range();
  for (let i = 0; ; i++) {
    if ((await store.transact((tx) => tx.getRange(begin, end, { limit: 1 }), { readOnly: true })).length === 0) break;
    if (i > 200) throw new Error('The indexer did not merge the pending list within 10 s.');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(MERGE_THREAD.available).toBe(true);

  // Named by themselves: the merge thread niced below the event loop, the commit thread at the event loop's value.
  expect(nicesOf('baton-merge')).toEqual([5]);
  expect(nicesOf('baton-commit')).toEqual([niceOf(`/proc/${process.pid}/task/${process.pid}/stat`)]);

  const res = await app.inject({ method: 'GET', url: '/v1/checkpoints?q=wagtail&limit=50', headers: auth() });
  expect(res.statusCode, res.body).toBe(200);
  expect((res.json() as { items: { id: string }[] }).items.map((item) => item.id).sort()).toEqual([...ids].sort());
});
