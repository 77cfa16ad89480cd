/**
 * Runs of words and file paths (`src/service/repository/terms.ts`), and the label index,
 * against a model, over the API: random programs of creates, PATCHes that
 * change a checkpoint's words, label and path (the newest or an older one),
 * compactions and purges on two tasks. After each program, a search for
 * every word, label and path (and a path with a word), followed page by
 * page, returns exactly the live checkpoints that hold it now, newest first,
 * each once; and a task whose last step was a purge has no run, no task
 * list entry and no open words left in the store. A create's words wait in
 * the pending list until a merge step (`service/indexer/`) merges some of it,
 * as the indexer does batch by batch; the app's own indexer is kept off the
 * duty (another holder's lease in the store), so the merges happen exactly
 * where the program says: search is complete before, between and after them,
 * and a program's last merge (of everything left) leaves no run of a word
 * overlapping another run of it in the same task — nothing merged twice.
 * A create's label and agent entries also wait in its pending entry (store
 * format 7, `repository/indexes.ts`): they are searched the same way, and
 * once everything is merged the `label` and `agent` index holds exactly the
 * entries of the live checkpoints as they are now.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { mergeBatch } from '../../../src/service/indexer/indexer.js';
import { keyspaceOf } from '../../../src/service/repository/keyspace.js';
import { Repository } from '../../../src/service/repository/repository.js';
import { decodeValue } from '../../../src/store/keyspace.js';
import { mergePending } from '../../support/insert.js';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../../support/app.js';

const WORDS = ['kestrel', 'osprey', 'wren', 'lark', 'heron'];
const TEAMS = ['core', 'web', 'storage ops'];
const AGENTS = ['agent-a', 'agent b%'];
// A space, a per cent sign and a line break are escaped in run words: each must still be found as itself.
const PATHS = ['src/a.ts', 'src/a b.ts', 'docs/100%.md', 'line\nbreak.txt'];

type Step =
  | { op: 'create'; task: number; words: string[]; team: string | undefined; path: string | undefined; agent: string }
  | { op: 'update'; pick: number; words: string[]; team: string | undefined; path: string | undefined }
  | { op: 'compact'; task: number; keepLast: number }
  | { op: 'purge'; task: number }
  | { op: 'merge'; batch: number };

const words = fc.subarray(WORDS);
const team = fc.option(fc.constantFrom(...TEAMS), { nil: undefined });
const path = fc.option(fc.constantFrom(...PATHS), { nil: undefined });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('create' as const), task: fc.nat(1), words, team, path, agent: fc.constantFrom(...AGENTS) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('update' as const), pick: fc.nat(), words, team, path }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('compact' as const), task: fc.nat(1), keepLast: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('purge' as const), task: fc.nat(1) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('merge' as const), batch: fc.integer({ min: 1, max: 4 }) }) },
);

const text = (list: string[]): string => (list.length === 0 ? 'nothing here' : list.join(' '));

async function send(t: TestApp, method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, payload?: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({ method, url, headers: { ...auth('admin'), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });
}

async function search(t: TestApp, query: string): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 200; pages++) {
    const res = await send(t, 'GET', `/v1/checkpoints?${query}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { items: { id: string }[]; nextCursor?: string };
    found.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor;
    if (cursor === undefined) return found;
  }
  throw new Error('The search did not end in 200 pages.');
}

it('finds exactly the live checkpoints holding each word after creates, changes, compactions and purges, and a purge leaves no run', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 16 }), async (steps) => {
      // No indexer of its own (BATON_INDEXER=off, as an instance that leaves it to another): only the program's merge steps merge.
      const t = await buildTestApp({ config: { indexer: 'off' } });
      try {
        const model: { id: string; task: number; words: string[]; team: string | undefined; path: string | undefined; agent: string; version: number }[] = [];
        const lastOp = new Map<number, Step['op']>();
        for (const s of steps) {
          if (s.op === 'create') {
            const body = checkpointBody(`task-${s.task}`, {
              agentId: s.agent,
              executionState: { phase: 'implementing', completedItems: [text(s.words)] },
              contextSummary: {},
              labels: s.team === undefined ? {} : { team: s.team },
              metrics: { filesModified: s.path === undefined ? [] : [s.path] },
            });
            const res = await send(t, 'POST', '/v1/checkpoints', body);
            expect(res.statusCode, res.body).toBe(201);
            model.push({ id: (res.json() as { id: string }).id, task: s.task, words: s.words, team: s.team, path: s.path, agent: s.agent, version: 1 });
            lastOp.set(s.task, 'create');
          } else if (s.op === 'update') {
            if (model.length === 0) continue;
            const entry = model[s.pick % model.length]!;
            const patch = {
              executionState: { completedItems: [text(s.words)] },
              labels: { team: s.team ?? null },
              metrics: { filesModified: s.path === undefined ? [] : [s.path] },
            };
            const res = await send(t, 'PATCH', `/v1/checkpoints/${entry.id}`, patch, { 'if-match': `"${entry.version}"` });
            // Compacted (410) or purged (404) checkpoints are not changed.
            if (res.statusCode === 410 || res.statusCode === 404) continue;
            expect(res.statusCode, res.body).toBe(200);
            entry.words = s.words;
            entry.team = s.team;
            entry.path = s.path;
            entry.version += 1;
          } else if (s.op === 'compact') {
            const res = await send(t, 'POST', `/v1/tasks/task-${s.task}/compact`, { keepLast: s.keepLast });
            expect([200, 404], res.body).toContain(res.statusCode);
          } else if (s.op === 'merge') {
            await t.store.transact((tx) => mergeBatch(new Repository(tx, 'default'), s.batch));
          } else {
            const res = await send(t, 'DELETE', `/v1/tasks/task-${s.task}`);
            expect([204, 404], res.body).toContain(res.statusCode);
            lastOp.set(s.task, 'purge');
          }
        }
        // Which checkpoints are live, and when each was created, as the service says.
        const live: { id: string; words: string[]; team: string | undefined; path: string | undefined; agent: string; createdAt: string }[] = [];
        for (const entry of model) {
          const res = await send(t, 'GET', `/v1/checkpoints/${entry.id}`);
          expect([200, 404, 410], res.body).toContain(res.statusCode);
          if (res.statusCode === 200) live.push({ ...entry, createdAt: (res.json() as { createdAt: string }).createdAt });
        }
        const newestFirst = (a: { id: string; createdAt: string }, b: { id: string; createdAt: string }) =>
          a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1;
        const expectFound = async (query: string, holds: (entry: (typeof live)[number]) => boolean) =>
          expect(await search(t, query), query).toEqual(live.filter(holds).sort(newestFirst).map((entry) => entry.id));
        const searchAll = async () => {
          for (const word of WORDS) await expectFound(`q=${word}`, (entry) => entry.words.includes(word));
          for (const value of TEAMS) await expectFound(`label.team=${encodeURIComponent(value)}`, (entry) => entry.team === value);
          for (const value of PATHS) await expectFound(`file=${encodeURIComponent(value)}`, (entry) => entry.path === value);
          for (const value of AGENTS) await expectFound(`agentId=${encodeURIComponent(value)}`, (entry) => entry.agent === value);
          await expectFound(`agentId=${encodeURIComponent(AGENTS[0]!)}&label.team=core`, (entry) => entry.agent === AGENTS[0] && entry.team === 'core');
          await expectFound(`file=${encodeURIComponent(PATHS[1]!)}&q=${WORDS[0]}`, (entry) => entry.path === PATHS[1] && entry.words.includes(WORDS[0]!));
        };
        // With whatever the program left pending, then with everything merged.
        await searchAll();
        await mergePending(t.store, 'default');
        await searchAll();
        // Every entry a create left to the merge is written, as the checkpoint is now, and no other.
        const { index } = keyspaceOf('default');
        const entries = await t.store.transact(async (tx) => (await tx.getRange(index.range().begin, index.range().end)).map((row) => index.unpack(row.key) as string[]), { readOnly: true });
        const held = (name: string) => entries.filter(([entryName]) => entryName === name).map(([, value, , id]) => `${value} ${id}`).sort();
        expect(held('label')).toEqual(live.filter((entry) => entry.team !== undefined).map((entry) => `team=${entry.team} ${entry.id}`).sort());
        expect(held('agent')).toEqual(live.map((entry) => `${entry.agent} ${entry.id}`).sort());
        const runs = await t.store.transact(
          async (tx) => (await tx.getRange(keyspaceOf('default').terms.range().begin, keyspaceOf('default').terms.range().end)).map((row) => ({ parts: keyspaceOf('default').terms.unpack(row.key) as string[], value: row.value })),
          { readOnly: true },
        );
        // Where a run whose key says open ended, under its task: (task, startAt, startId, word) → [lastAt, lastId], or, for the
        // runs of a start a merge ended first (store format 10), (task, startAt, startId, "") → lastAt, lastId and their words, a
        // line each.
        const ends = new Map<string, string[]>();
        for (const row of await t.store.transact((tx) => tx.getRange(keyspaceOf('default').runEnds.range().begin, keyspaceOf('default').runEnds.range().end), { readOnly: true })) {
          const [task, startAt, startId, word] = keyspaceOf('default').runEnds.unpack(row.key) as string[];
          if (word !== '') ends.set(`${word}\u0000${task}\u0000${startAt} ${startId}`, decodeValue(row.value) as string[]);
          else {
            const [lastAt, lastId, ...words] = (decodeValue(row.value) as string).split('\n');
            for (const ended of words) ends.set(`${ended}\u0000${task}\u0000${startAt} ${startId}`, [lastAt!, lastId!]);
          }
        }
        // A word's runs in one task never overlap: a run that starts inside another would be a checkpoint merged twice.
        const byWordTask = new Map<string, { start: string; last: string | undefined }[]>();
        for (const { parts, value } of runs) {
          const [word, task, startAt, startId] = parts as [string, string, string, string];
          const own = decodeValue(value) as string[];
          const last = own.length === 2 ? own : (ends.get(`${word}\u0000${task}\u0000${startAt} ${startId}`) ?? own);
          const list = byWordTask.get(`${word}\u0000${task}`) ?? [];
          list.push({ start: `${startAt} ${startId}`, last: last.length === 2 ? `${last[0]} ${last[1]}` : undefined });
          byWordTask.set(`${word}\u0000${task}`, list);
        }
        for (const [where, list] of byWordTask) {
          const open = list.filter((run) => run.last === undefined);
          expect(open.length, where).toBeLessThanOrEqual(1);
        }
        const { terms, runEnds, taskTerms, openTerms, pendingTerms, pendingList } = keyspaceOf('default');
        const keys = await t.store.transact(
          async (tx) => {
            const rows = [];
            for (const space of [terms, runEnds, taskTerms, openTerms, pendingTerms, pendingList]) rows.push(...(await tx.getRange(space.range().begin, space.range().end)).map((row) => space.unpack(row.key)));
            return rows;
          },
          { readOnly: true },
        );
        for (const [task, op] of lastOp) {
          if (op !== 'purge') continue;
          expect(keys.filter((parts) => parts.includes(`task-${task}`))).toEqual([]);
        }
      } finally {
        await t.close();
      }
    }),
    { numRuns: 60 },
  );
}, 300_000);
