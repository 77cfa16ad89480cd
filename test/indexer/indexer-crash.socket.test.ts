/**
 * The indexer after `kill -9` (issue: the search index built off the
 * request path): a real Baton process started with `BATON_INDEXER=off` takes
 * 3,000 creates (so every create's words wait in the pending list, and
 * search finds them there); started again with the indexer on, it merges,
 * and it is killed with SIGKILL in the middle. The store then holds a pending list that is
 * exactly what was not merged; the restarted process merges exactly that
 * many (its own counter), nothing twice, and search finds every checkpoint
 * by its words, rare and common, before and after.
 */
import { afterEach, expect, it } from 'vitest';
import { join } from 'node:path';
import { keyspaceOf } from '../../src/service/repository/keyspace.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { removeDir, startBaton, stopBaton, tempDataDir, WRITER, type RunningServer } from '../support/crash-server.js';
import { TOKENS } from '../support/app.js';

const COUNT = 3_000;
const TASKS = 30;
const COMMON = ['lease', 'fence', 'journal', 'replay', 'cursor', 'shard'];
const ADMIN = { authorization: `Bearer ${TOKENS.admin}` };

let root: string | undefined;
let server: RunningServer | undefined;

afterEach(async () => {
  await stopBaton(server?.child);
  server = undefined;
  removeDir(root);
  root = undefined;
});

/** Checkpoint `i`: its own rare word, and two of the common ones. */
const body = (i: number) =>
  JSON.stringify({
    taskId: `task-${i % TASKS}`,
    agentId: 'agent-1',
    executionState: { phase: 'implementing', completedItems: [`marker${i} ${COMMON[i % COMMON.length]} ${COMMON[(i * 7 + 1) % COMMON.length]}`] },
  });

async function merged(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: ADMIN })).text();
  return Number(/^indexer_merged_total (\d+)/m.exec(text)?.[1] ?? NaN);
}

async function pendingIn(dir: string): Promise<number> {
  const store = LmdbStore.open({ path: dir });
  try {
    const { pendingTerms, pendingList } = keyspaceOf('default');
    let count = 0;
    for (const space of [pendingTerms, pendingList]) count += (await store.transact((tx) => tx.getRange(space.range().begin, space.range().end), { readOnly: true })).length;
    return count;
  } finally {
    await store.close();
  }
}

/** Every page of a search. */
async function search(base: string, query: string): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | undefined;
  do {
    const res = await fetch(`${base}/v1/checkpoints?${query}&limit=500${cursor ? `&cursor=${cursor}` : ''}`, { headers: WRITER });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: { id: string }[]; nextCursor?: string };
    found.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return found;
}

async function expectFound(base: string, ids: string[]): Promise<void> {
  for (const i of [0, 1, 777, 1_500, COUNT - 1]) expect(await search(base, `q=marker${i}`), `marker${i}`).toEqual([ids[i]]);
  const holding = (word: string) => ids.filter((_, i) => COMMON[i % COMMON.length] === word || COMMON[(i * 7 + 1) % COMMON.length] === word);
  for (const word of COMMON.slice(0, 2)) expect(new Set(await search(base, `q=${word}`)), word).toEqual(new Set(holding(word)));
}

it('resumes after kill -9 mid-merge with exactly what was left: nothing merged twice, nothing lost, search complete throughout', async () => {
  root = tempDataDir('baton-indexer-');
  const data = join(root, 'data');
  // No indexer: the creates' words wait in the pending list.
  server = await startBaton(data, { BATON_QUEUE_DIR: join(root, 'queue'), BATON_INDEXER: 'off' });
  let base = server.url;

  const ids: string[] = new Array<string>(COUNT);
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      for (let i = next++; i < COUNT; i = next++) {
        const res = await fetch(`${base}/v1/checkpoints`, { method: 'POST', headers: { ...WRITER, 'content-type': 'application/json' }, body: body(i) });
        expect(res.status).toBe(201);
        ids[i] = ((await res.json()) as { id: string }).id;
      }
    }),
  );
  expect(await merged(base)).toBe(0);
  // Found from the pending list (past the bound a search reads, by a scan instead).
  await expectFound(base, ids);

  // Stopped and started again with the indexer on: it merges. Killed in the middle.
  await stopBaton(server.child);
  server = await startBaton(data, { BATON_QUEUE_DIR: join(root, 'queue') });
  base = server.url;
  let seen = 0;
  const deadline = Date.now() + 30_000;
  while (seen === 0 && Date.now() < deadline) {
    seen = await merged(base);
    if (seen === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  server.child.kill('SIGKILL');
  await new Promise((resolve) => server!.child.once('exit', resolve));
  expect(seen).toBeGreaterThan(0);
  const left = await pendingIn(data);
  expect(left, 'the kill came after the merge had finished: nothing left to resume').toBeGreaterThan(0);
  expect(left).toBeLessThan(COUNT);

  // The restarted instance merges exactly what was left.
  server = await startBaton(data, { BATON_QUEUE_DIR: join(root, 'queue') });
  const restarted = server.url;
  await expectFound(restarted, ids);
  const waitUntil = Date.now() + 60_000;
  while ((await merged(restarted)) < left && Date.now() < waitUntil) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await merged(restarted)).toBe(left);
  await expectFound(restarted, ids);
  await stopBaton(server.child);
  server = undefined;
  expect(await pendingIn(data)).toBe(0);
}, 180_000);
