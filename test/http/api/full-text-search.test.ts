/**
 * Full-text search, `GET /v1/checkpoints?q=` (DESIGN §3, docs/api.md): whole
 * words from the `term` index, kept in each write's transaction; every word
 * must appear; results are complete, newest first and paged with the cursor
 * like every search; a tenant finds only its own checkpoints.
 */
import { Inserter, mergePending } from '../../support/insert.js';
import { describe, expect, it } from 'vitest';
import { buildCheckpoint } from '../../../src/domain/changes.js';
import { checkpointInput, type Checkpoint } from '../../../src/domain/checkpoint.js';
import { newId } from '../../../src/domain/ids.js';
import { Repository } from '../../../src/service/repository/repository.js';
import { keyspaceOf } from '../../../src/service/repository/keyspace.js';
import { encodeValue } from '../../../src/store/keyspace.js';
import { auth, checkpointBody, useClockedTestApp, type Who } from '../../support/app.js';

type Json = Record<string, unknown>;
type Page = { items: Json[]; nextCursor?: string };

const { app, clock } = useClockedTestApp('2025-03-01T10:00:00.000Z');

/** A checkpoint whose only searched text is `text`, one minute after the one before. */
async function create(taskId: string, text: string, who: Who = 'writer'): Promise<Json> {
  const body = checkpointBody(taskId, { executionState: { phase: 'implementing', completedItems: [text] }, contextSummary: {} });
  const res = await app().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(who), payload: body });
  expect(res.statusCode, res.body).toBe(201);
  clock.advance(60_000);
  return res.json() as Json;
}

async function search(query: string, who: Who = 'writer'): Promise<Page> {
  const res = await app().app.inject({ method: 'GET', url: `/v1/checkpoints?${query}`, headers: auth(who) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page;
}

const ids = async (query: string, who: Who = 'writer') => (await search(query, who)).items.map((item) => item.id);
const q = (text: string) => `q=${encodeURIComponent(text)}`;

/** Every page of a search, following nextCursor until it is absent. */
async function pages(query: string): Promise<unknown[][]> {
  const found: unknown[][] = [];
  let cursor: string | undefined;
  do {
    const page = await search(cursor === undefined ? query : `${query}&cursor=${encodeURIComponent(cursor)}`);
    found.push(page.items.map((item) => item.id));
    cursor = page.nextCursor;
    expect(found.length).toBeLessThan(100);
  } while (cursor !== undefined);
  return found;
}

describe('q: whole words, every one of them', () => {
  it('matches whole words in any case, ignoring punctuation and stop words', async () => {
    const widget = await create('task-q', 'Refactor the Widget-Factory (see issue #409)');
    const lease = await create('task-q', 'Add the lease table; widgets later');
    expect(await ids(q('widget'))).toEqual([widget.id]);
    expect(await ids(q('WIDGET factory'))).toEqual([widget.id]);
    expect(await ids(q('the widget, of the factory!'))).toEqual([widget.id]);
    expect(await ids(q('409'))).toEqual([widget.id]);
    expect(await ids(q('widgets'))).toEqual([lease.id]);
    expect(await ids(q('widg'))).toEqual([]);
    expect(await ids(q('widget lease'))).toEqual([]);
    expect(await ids(q('refactor'))).toEqual([widget.id]);
    expect(await ids(`${q('table')}&taskId=task-q`)).toEqual([lease.id]);
    expect(await ids(`${q('table')}&taskId=task-other`)).toEqual([]);
  });

  it('refuses a q with no word to look for: 400 validation_failed naming query.q, saying what to do', async () => {
    await create('task-q', 'the lease');
    for (const text of ['the', 'The AND of', '...', 'a 1 -']) {
      const res = await app().app.inject({ method: 'GET', url: `/v1/checkpoints?${q(text)}`, headers: auth() });
      expect(res.statusCode, text).toBe(400);
      const problem = res.json() as { code: string; errors: { field: string; message: string }[] };
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors).toEqual([{ field: 'query.q', message: expect.stringMatching(/search for a more specific word/) }]);
    }
  });
});

describe('the term index follows every write', () => {
  it('a PATCH that drops a word no longer finds the checkpoint by it; the new word does; finalize keeps both ways', async () => {
    const made = await create('task-patch', 'tune the fencing check');
    const patched = await app().app.inject({
      method: 'PATCH',
      url: `/v1/checkpoints/${String(made.id)}`,
      headers: { ...auth(), 'if-match': '"1"' },
      payload: { executionState: { completedItems: ['tune the sweeper'] } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(await ids(q('fencing'))).toEqual([]);
    expect(await ids(q('sweeper'))).toEqual([made.id]);
    expect(await ids(q('tune'))).toEqual([made.id]);

    const finalized = await app().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(made.id)}/finalize`, headers: auth(), payload: { status: 'completed' } });
    expect(finalized.statusCode, finalized.body).toBe(200);
    expect(await ids(q('sweeper tune'))).toEqual([made.id]);
    expect(await ids(`${q('sweeper')}&status=finalized`)).toEqual([made.id]);
    expect(await ids(q('fencing'))).toEqual([]);
  });

  it('a purge removes its checkpoints from the term index, and leaves no term entry behind', async () => {
    await create('task-purged', 'zeppelin hangar');
    const kept = await create('task-kept', 'zeppelin mooring');
    const res = await app().app.inject({ method: 'DELETE', url: '/v1/tasks/task-purged', headers: auth('admin') });
    expect(res.statusCode, res.body).toBe(204);
    expect(await ids(q('zeppelin'))).toEqual([kept.id]);
    expect(await ids(q('hangar'))).toEqual([]);
    const hangar = keyspaceOf('default').index.range('term', 'hangar');
    const rows = await app().store.transact(async (tx) => tx.getRange(hangar.begin, hangar.end));
    expect(rows).toEqual([]);
  });

  it('keeps tenants apart: another tenant’s checkpoints never match', async () => {
    const ours = await create('task-shared', 'quokka census');
    const theirs = await create('task-shared', 'quokka census', 'acmeWriter');
    expect(await ids(q('quokka'))).toEqual([ours.id]);
    expect(await ids(q('quokka'), 'acmeWriter')).toEqual([theirs.id]);
    expect(await ids(`${q('census')}&taskId=task-shared`, 'acmeWriter')).toEqual([theirs.id]);
  });
});

describe('complete results, paged', () => {
  /** Each test's app has its own store, and so its own newest checkpoint per task. */
  const inserters = new WeakMap<object, Inserter>();
  const inserterOf = (store: object): Inserter => {
    if (!inserters.has(store)) inserters.set(store, new Inserter());
    return inserters.get(store)!;
  };
  /** Writes checkpoints straight through the repository, 1,000 a transaction, one millisecond apart. */
  async function insert(texts: string[], start: number): Promise<Checkpoint[]> {
    const made = texts.map((text, i) => {
      const input = checkpointInput.parse({ taskId: `task-bulk-${i % 50}`, agentId: 'agent-1', executionState: { completedItems: [text] } });
      return buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1) + start + i).toISOString());
    });
    for (let from = 0; from < made.length; from += 1_000) {
      await app().store.transact(async (tx) => {
        const repo = new Repository(tx, 'default');
        for (const [i, checkpoint] of made.slice(from, from + 1_000).entries()) await inserterOf(app().store).insert(repo, checkpoint, start + from + i + 1);
      });
    }
    return made;
  }

  it('pages through every match exactly once, newest first, however many non-matching checkpoints lie between', async () => {
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `routine housekeeping round ${i}`);
    await insert(filler(3_000), 0);
    const matching = await insert(
      Array.from({ length: 30 }, (_, i) => `narwhal sighting number ${i}`),
      3_000,
    );
    await insert(filler(3_000), 3_030);

    const found = await pages(`${q('narwhal')}&limit=10`);
    expect(found.map((page) => page.length)).toEqual([10, 10, 10]);
    expect(found.flat()).toEqual(matching.map((c) => c.id).reverse());

    const pair = await pages(`${q('sighting NARWHAL')}&limit=7`);
    expect(pair.flat()).toEqual(matching.map((c) => c.id).reverse());
    expect(pair.slice(0, -1).every((page) => page.length === 7)).toBe(true);

    const one = await pages(`${q('narwhal number 17')}&limit=10`);
    expect(one.flat()).toEqual([matching[17]!.id]);
  }, 120_000);

  it('joins several words without reading every entry of either, and stays complete when the read budget cuts a join short', async () => {
    // Two words that alternate and meet at five places, two of them 3,000 checkpoints apart: the join jumps past every entry of both between them.
    const together = new Set([3, 10, 3_000, 5_990, 5_995]);
    const texts = Array.from({ length: 6_000 }, (_, i) => (together.has(i) ? 'kestrel and osprey' : i % 2 === 0 ? 'kestrel alone' : 'osprey alone'));
    const made = await insert(texts, 0);
    const expected = made.filter((_, i) => together.has(i)).map((c) => c.id).reverse();

    const found = await pages(`${q('osprey kestrel')}&limit=4`);
    expect(found.flat()).toEqual(expected);
    // 3,000 seeks do not fit one page's budget of 2,000 keys: a page stopped inside the join, short of its limit.
    expect(found.slice(0, -1).some((page) => page.length < 4)).toBe(true);
    expect((await pages(`${q('kestrel osprey')}&from=${made[10]!.createdAt}&to=${made[5_990]!.createdAt}&limit=10`)).flat()).toEqual(expected.slice(1, 4));
  }, 120_000);

  it('does not find checkpoints written before the term index by q alone, but does with taskId, file or label', async () => {
    const [old] = await insert(['legacy ocelot note'], 0);
    // A checkpoint stored before this release has no word runs: remove them to stand in for one.
    await app().store.transact(async (tx) => {
      const { terms, taskTerms, openTerms } = keyspaceOf('default');
      for (const term of ['legacy', 'ocelot', 'note']) tx.clear(terms.pack(term, old!.taskId, old!.createdAt, old!.id));
      tx.clear(taskTerms.pack(old!.taskId, old!.createdAt, old!.id));
      tx.clear(openTerms.pack(old!.taskId));
    });
    expect(await ids(q('ocelot'))).toEqual([]);
    expect(await ids(`${q('ocelot')}&taskId=${old!.taskId}`)).toEqual([old!.id]);
  });

  it('keeps one run per path a checkpoint holds however often a change steps it, on the newest checkpoint and an older one', async () => {
    const send = (method: 'POST' | 'PATCH', url: string, payload: object, headers: Record<string, string> = {}) =>
      app().app.inject({ method, url, headers: { ...auth('admin'), ...headers }, payload });
    const made: string[] = [];
    for (const text of ['older step', 'newest step']) {
      const res = await send('POST', '/v1/checkpoints', checkpointBody('task-step', { executionState: { phase: 'implementing', completedItems: [text] }, contextSummary: {} }));
      made.push((res.json() as { id: string }).id);
      clock.advance(60_000);
    }
    // Both merged into the runs before the changes step their paths (a change to a checkpoint still pending rewrites only its entry).
    await mergePending(app().store, 'default');
    for (let round = 0; round < 30; round++) {
      for (const id of made) {
        const res = await send('PATCH', `/v1/checkpoints/${id}`, { metrics: { filesModified: [`src/round-${round}.ts`] } }, { 'if-match': `"${round + 1}"` });
        expect(res.statusCode, res.body).toBe(200);
      }
    }
    // The runs as the indexer leaves them once it has caught up.
    await mergePending(app().store, 'default');
    const { terms, taskTerms } = keyspaceOf('default');
    const [runs, listed] = await app().store.transact(
      async (tx) => [
        (await tx.getRange(terms.range().begin, terms.range().end)).map((row) => terms.unpack(row.key)[0] as string).filter((word) => word.startsWith('file:src/round-')),
        (await tx.getRange(taskTerms.range('task-step').begin, taskTerms.range('task-step').end)).map((row) => row.value.length),
      ],
      { readOnly: true },
    );
    expect(runs).toEqual(['file:src/round-29.ts', 'file:src/round-29.ts']);
    expect(Math.max(...listed)).toBeLessThan(200);
    expect(await ids('file=src/round-29.ts')).toEqual([...made].reverse());
    expect(await ids('file=src/round-5.ts')).toEqual([]);
  });

  it('finds checkpoints whose file entries an earlier release wrote, beside those indexed as runs, newest first and once', async () => {
    const send = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = {}) =>
      app().app.inject({ method, url, headers: { ...auth('admin'), ...headers }, ...(payload ? { payload } : {}) });
    const tagged = (taskId: string, text: string) =>
      checkpointBody(taskId, { executionState: { phase: 'implementing', completedItems: [text] }, contextSummary: {}, metrics: { filesModified: ['src/lynx cat.ts'] } });
    const created = await send('POST', '/v1/checkpoints', tagged('task-legacy', 'legacy ocelot note'));
    expect(created.statusCode, created.body).toBe(201);
    const old = created.json() as { id: string; taskId: string; createdAt: string };
    clock.advance(60_000);
    await mergePending(app().store, 'default');
    // Stored before paths were runs: no runs at all, and one index entry per path.
    const { index } = keyspaceOf('default');
    const legacyKey = index.pack('file', 'src/lynx cat.ts', old.createdAt, old.id);
    await app().store.transact(async (tx) => {
      expect(await new Repository(tx, 'default').terms.clearTask(old.taskId, 1_000)).toEqual({ cleared: 1, done: true });
      tx.set(legacyKey, encodeValue(old.taskId));
    });
    const fresh = (await send('POST', '/v1/checkpoints', tagged('task-runs', 'fresh ocelot note'))).json() as { id: string };
    clock.advance(60_000);

    const byPath = `file=${encodeURIComponent('src/lynx cat.ts')}`;
    expect(await ids(byPath)).toEqual([fresh.id, old.id]);
    expect(await pages(`${byPath}&limit=1`)).toEqual([[fresh.id], [old.id]]);
    expect(await ids(`${q('legacy')}&${byPath}`)).toEqual([old.id]);
    expect(await ids(q('legacy'))).toEqual([]);

    // A change indexes the new path as a run and clears the old entry.
    const changed = await send('PATCH', `/v1/checkpoints/${old.id}`, { metrics: { filesModified: ['src/puma.ts'] } }, { 'if-match': '"1"' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(await ids(byPath)).toEqual([fresh.id]);
    expect(await ids('file=src/puma.ts')).toEqual([old.id]);
    expect(await app().store.transact(async (tx) => tx.get(legacyKey), { readOnly: true })).toBeUndefined();

    // A purge takes an old entry with the task.
    await app().store.transact(async (tx) => {
      tx.set(index.pack('file', 'src/puma.ts', old.createdAt, old.id), encodeValue(old.taskId));
    });
    expect((await send('DELETE', `/v1/tasks/${old.taskId}`)).statusCode).toBe(204);
    expect(await app().store.transact(async (tx) => tx.get(index.pack('file', 'src/puma.ts', old.createdAt, old.id)), { readOnly: true })).toBeUndefined();
  });

});
