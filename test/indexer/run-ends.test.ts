/**
 * Where word runs end (`repository/terms.ts`, store format 10): a merge ends
 * the runs a checkpoint's words leave in one row for each checkpoint they
 * started at, not a key for each word: the first time runs of a start end,
 * `("tc", taskId, startAt, startId, "")`, and at each later time,
 * `("tc", taskId, startAt, startId, "", lastAt, lastId)`, → the last
 * position and the words, a line each. Search finds exactly the
 * checkpoints that hold a word whether the ends are in such rows or in a key
 * each (as a release before format 10 wrote them, and as a change of a
 * merged checkpoint still writes them), and a store kept in the `spaces`
 * layout is merged as format 8 merged it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { keyspaceOf } from '../../src/service/repository/keyspace.js';
import { Repository, type RunsApart } from '../../src/service/repository/repository.js';
import { RUNS_COMPANION } from '../../src/service/indexer/runs-apart.js';
import { decodeValue, encodeValue, keyLayout, systemKeyspace, useKeyLayout } from '../../src/store/keyspace.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { auth, buildTestApp, checkpointBody, TOKENS, type TestApp } from '../support/app.js';
import { mergePending } from '../support/insert.js';
import { useKeyedApp } from '../support/keyed-app.js';

/** Each task's checkpoints as an agent's move on: a step's words come, stay a while, and go together. */
const STEPS = ['kestrel osprey', 'wren lark', 'heron egret', 'plover curlew', 'dunlin stint', 'godwit knot', 'avocet ruff'];

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  useKeyLayout('task');
});

async function send(t: TestApp, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.app.inject({ method, url, headers: { ...auth(), ...headers }, ...(payload === undefined ? {} : { payload }) });
}

/** Creates each task's checkpoints, three steps of text each, moving one step on each time; the model of which holds which word. */
async function fill(t: TestApp, rounds = 6): Promise<Map<string, string[]>> {
  const holding = new Map<string, string[]>();
  for (let n = 0; n < rounds; n++) {
    for (const task of ['task-a', 'task-b']) {
      const steps = [0, 1, 2].map((i) => STEPS[(n + i + (task === 'task-b' ? 3 : 0)) % STEPS.length]!);
      const res = await send(t, 'POST', '/v1/checkpoints', checkpointBody(task, { executionState: { phase: 'implementing', completedItems: steps }, contextSummary: {}, metrics: { filesModified: [] } }));
      expect(res.statusCode, res.body).toBe(201);
      const id = (res.json() as { id: string }).id;
      for (const word of new Set(steps.join(' ').split(' '))) holding.set(word, [...(holding.get(word) ?? []), id]);
    }
  }
  return holding;
}

async function search(t: TestApp, word: string): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await send(t, 'GET', `/v1/checkpoints?q=${word}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { items: { id: string }[]; nextCursor?: string };
    found.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor;
    if (cursor === undefined) return found.sort();
  }
  throw new Error('The search did not end in 100 pages.');
}

/**
 * Search finds exactly the checkpoints holding each word (a run read as
 * reaching further than it does would still be checked against each record),
 * and each word's runs read as open only in the tasks whose newest checkpoint
 * holds it: where a run ended is read wherever it is kept.
 */
async function expectFound(t: TestApp, holding: Map<string, string[]>): Promise<void> {
  const newest = new Set<string>();
  for (const task of ['task-a', 'task-b']) {
    const latest = (await send(t, 'GET', `/v1/tasks/${task}/checkpoints/latest`)).json() as { id: string };
    for (const [word, ids] of holding) if (ids.includes(latest.id)) newest.add(`${word} ${task}`);
  }
  for (const [word, ids] of holding) {
    expect(await search(t, word), word).toEqual([...ids].sort());
    const runs = await t.store.transact(async (tx) => (await new Repository(tx, 'default', undefined, apart(t)).terms.runs(word, 1_000))!, { readOnly: true });
    const open = runs.filter((run) => run.last === undefined).map((run) => `${word} ${run.taskId}`);
    expect(open.sort(), word).toEqual([...newest].filter((held) => held.startsWith(`${word} `)).sort());
  }
}

/** The runs the merge thread keeps apart (LMDB: the store's companion `runs/`, `indexer/runs-apart.ts`), read beside the store's. */
function apart(t: TestApp): RunsApart | undefined {
  const companion = t.store.companion?.(RUNS_COMPANION);
  if (companion === undefined) return undefined;
  return {
    get: (key) => companion.transact((tx) => tx.get(key), { readOnly: true }),
    getRange: (begin, end, limit) => companion.transact((tx) => tx.getRange(begin, end, { limit }), { readOnly: true }),
  };
}

/** Waits until the indexer (its merge thread) has merged every pending entry. */
async function merged(t: TestApp): Promise<void> {
  const { pendingList } = keyspaceOf('default');
  const { begin, end } = pendingList.range();
  const deadline = Date.now() + 20_000;
  while ((await t.store.transact((tx) => tx.getRange(begin, end, { limit: 1 }), { readOnly: true })).length > 0) {
    expect(Date.now()).toBeLessThan(deadline);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The `tc` rows: a row for runs ended together (its words), or a key for one run (its word). */
async function endRows(t: TestApp): Promise<Array<{ key: Buffer; parts: string[]; value: Buffer }>> {
  const { runEnds } = keyspaceOf('default');
  const { begin, end } = runEnds.range();
  const rows = await t.store.transact((tx) => tx.getRange(begin, end), { readOnly: true });
  return rows.map(({ key, value }) => ({ key, parts: runEnds.unpack(key) as string[], value }));
}

/** A row of ends written together: where the runs' last checkpoint is, and their words. */
function together(value: Buffer): { last: [string, string]; words: string[] } {
  const [lastAt, lastId, ...words] = (decodeValue(value) as string).split('\n');
  return { last: [lastAt!, lastId!], words };
}

describe('the ends of word runs', () => {
  it('are written a row for the runs that started together and end together, and search finds exactly the checkpoints holding each word', async () => {
    app = await buildTestApp({ config: { indexer: 'off' } });
    const holding = await fill(app);
    expect(await mergePending(app.store, 'default')).toBe(12);
    const rows = await endRows(app);
    // Each task: its first checkpoint starts three steps' runs, which end a step at a time: a first row, then two later rows;
    // the steps started later came and went together, two of them so far: a first row each. Every row holds a step's two words.
    expect(rows.every(({ parts }) => parts[3] === '')).toBe(true);
    expect(rows.filter(({ parts }) => parts.length === 4)).toHaveLength(6);
    expect(rows.filter(({ parts }) => parts.length === 6)).toHaveLength(4);
    for (const { value } of rows) expect(together(value).words).toHaveLength(2);
    await expectFound(app, holding);
  });

  it('of a start that ended some before are told from the runs still open there by the task’s open runs', async () => {
    app = await buildTestApp({ config: { indexer: 'off' } });
    // A seventh checkpoint brings back the second step of the first: its run from the first checkpoint ended in a later row,
    // and a new run of its words is open, so the open runs hold them from another start.
    const holding = await fill(app, 7);
    await mergePending(app.store, 'default');
    expect((await endRows(app)).filter(({ parts }) => parts.length === 6).length).toBeGreaterThan(0);
    await expectFound(app, holding);
  });

  it('are written so by the merge thread too, which is told the store’s layout', async () => {
    app = await buildTestApp({ config: { indexerDelayMs: 0 } });
    const holding = await fill(app);
    await merged(app);
    const rows = await endRows(app);
    expect(rows.every(({ parts }) => parts[3] === '')).toBe(true);
    expect(rows.filter(({ parts }) => parts.length === 4)).toHaveLength(6);
    expect(rows.filter(({ parts }) => parts.length === 6)).toHaveLength(4);
    await expectFound(app, holding);
  });

  it('are still read from a key for each run, as a release before format 10 wrote them', async () => {
    app = await buildTestApp({ config: { indexer: 'off' } });
    const holding = await fill(app);
    await mergePending(app.store, 'default');
    const { runEnds } = keyspaceOf('default');
    const rows = await endRows(app);
    // The same ends, a key each: ("tc", taskId, startAt, startId, word) → [lastAt, lastId].
    await app.store.transact(async (tx) => {
      for (const { key, parts, value } of rows) {
        const [taskId, startAt, startId, word] = parts;
        if (word !== '') continue;
        tx.clear(key);
        const { last, words } = together(value);
        for (const ended of words) tx.set(runEnds.pack(taskId!, startAt!, startId!, ended), encodeValue(last));
      }
    });
    expect((await endRows(app)).every(({ parts }) => parts[3] !== '')).toBe(true);
    await expectFound(app, holding);
    // Merges after them write rows again, beside the keys: both are read.
    const more = await fill(app);
    await mergePending(app.store, 'default');
    const after = await endRows(app);
    expect(after.some(({ parts }) => parts[3] === '')).toBe(true);
    expect(after.some(({ parts }) => parts[3] !== '')).toBe(true);
    for (const [word, ids] of more) holding.set(word, [...(holding.get(word) ?? []), ...ids]);
    await expectFound(app, holding);
  });

  it('of runs a change of the newest checkpoint ends are a key each, and found beside the rows', async () => {
    app = await buildTestApp({ config: { indexer: 'off' } });
    const holding = await fill(app);
    await mergePending(app.store, 'default');
    const latest = (await send(app, 'GET', '/v1/tasks/task-a/checkpoints/latest')).json() as { id: string; version: number };
    // Its words now: one step's only; the other two steps' runs end at it.
    const res = await send(app, 'PATCH', `/v1/checkpoints/${latest.id}`, { executionState: { completedItems: ['sandpiper'] } }, { 'if-match': `"${latest.version}"` });
    expect(res.statusCode, res.body).toBe(200);
    for (const [word, ids] of holding) holding.set(word, ids.filter((id) => id !== latest.id));
    holding.set('sandpiper', [latest.id]);
    const rows = await endRows(app);
    expect(rows.some(({ parts }) => parts[3] === '')).toBe(true);
    expect(rows.some(({ parts }) => parts[3] !== '')).toBe(true);
    await expectFound(app, holding);
  });

  it('are a key for each run in a store kept in the spaces layout, as format 8 wrote them', async () => {
    // A store a release before format 9 wrote keeps its layout (`key-layout.ts`): the layout row set before the service opens it.
    const dir = mkdtempSync(join(tmpdir(), 'baton-run-ends-'));
    const store = LmdbStore.open({ path: dir });
    await store.transact(async (tx) => tx.set(systemKeyspace().layout.prefix, encodeValue({ layout: 'spaces' })));
    // The indexer on: the merge thread, whose own module would pack keys in the `task` layout, is told this store's.
    const config = configSchema.parse({ dataDir: dir, tokens: `writer:${TOKENS.writer}`, logLevel: 'silent', indexerDelayMs: 0 });
    const served = await buildApp({ config, store });
    app = {
      app: served,
      store,
      dir,
      config,
      reopen: () => Promise.reject(new Error('not reopened here')),
      async close() {
        await served.close();
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
    expect(keyLayout()).toBe('spaces');
    const holding = await fill(app);
    await merged(app);
    const rows = await endRows(app);
    expect(rows.length).toBeGreaterThan(0);
    for (const { parts } of rows) expect(parts[3]).not.toBe('');
    await expectFound(app, holding);
  });
});

describe('the ends of word runs under encryption at rest', () => {
  const keyed = useKeyedApp('baton-run-ends-keys-');
  it('are blinded by the pass that blinds a plain store’s index, in the rows written together too', { timeout: 60_000 }, async () => {
    let served = await keyed.start({ withKeys: false, indexer: 'off' });
    const post = (payload: Record<string, unknown>) => served.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload });
    const step = (items: string[]) => checkpointBody('plain-task', { executionState: { phase: 'implementing', completedItems: items }, contextSummary: {}, metrics: { filesModified: [] } });
    expect((await post(step(['gazetteer almanac', 'lexicon']))).statusCode).toBe(201);
    expect((await post(step(['lexicon']))).statusCode).toBe(201);
    await mergePending(keyed.store(), 'default');
    const ends = async () => {
      const { runEnds } = keyspaceOf('default');
      const { begin, end } = runEnds.range();
      return (await keyed.store().transact((tx) => tx.getRange(begin, end), { readOnly: true })).map(({ key, value }) => ({ parts: runEnds.unpack(key) as string[], value }));
    };
    // The step that went: its two words' runs ended together, in plain words.
    const plain = await ends();
    expect(plain.map(({ parts, value }) => [parts[3], together(value).words.sort()])).toEqual([['', ['almanac', 'gazetteer']]]);
    await keyed.stop();

    writeFileSync(keyed.keyFile, `k1:${randomBytes(32).toString('base64')}\n`);
    served = await keyed.start({ indexer: 'off' });
    expect((await served.inject({ method: 'POST', url: '/v1/admin/rekey', headers: auth('admin'), payload: {} })).statusCode).toBe(202);
    for (let state = 'running'; state === 'running'; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      state = (await served.inject({ method: 'GET', url: '/v1/admin/rekey', headers: auth('admin') })).json().state;
    }
    const blinded = await ends();
    expect(blinded).toHaveLength(1);
    const { words } = together(blinded[0]!.value);
    expect(words).toHaveLength(2);
    for (const word of words) expect(word.startsWith('~'), word).toBe(true);
    const found = (await served.inject({ method: 'GET', url: '/v1/checkpoints?q=gazetteer', headers: auth() })).json().items as unknown[];
    expect(found).toHaveLength(1);
  });
});
