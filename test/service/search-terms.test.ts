/**
 * Full-text search over word runs (`src/service/search-terms.ts`) under the
 * read budget, by the store's own counters: two words that alternate over
 * 20,000 checkpoints and meet at a few places are found exactly, newest
 * first, in pages that never read more keys than the budget allows, however
 * far apart the matches are; one rare word with a common one costs a few
 * keys a match. And a model check of the merge itself, with tiny budgets and
 * pages.
 */
import { Inserter } from '../support/insert.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCheckpoint } from '../../src/domain/changes.js';
import { checkpointInput, type Checkpoint } from '../../src/domain/checkpoint.js';
import type { Actor } from '../../src/domain/commands.js';
import { newId } from '../../src/domain/ids.js';
import { READ_BUDGET, ReadBudget, Repository } from '../../src/service/repository/repository.js';
import { keyspaceOf } from '../../src/service/repository/keyspace.js';
import { mergeRuns, type Bound } from '../../src/service/search-terms.js';
import { present } from '../../src/service/invariants.js';
import { searchCheckpoints } from '../../src/service/search.js';
import { serviceHarness, type ServiceHarness } from './service-context.js';

const COUNT = 20_000;
/** Where both words appear: far apart, so that a page runs out of budget between them. */
const TOGETHER = new Set([7, 8, 9_000, 19_990, 19_999]);
const actor: Actor = { tenant: 'default', role: 'auditor', subject: 'test' };

let harness: ServiceHarness;
let made: Checkpoint[];

beforeAll(async () => {
  const inserter = new Inserter();
  harness = await serviceHarness();
  made = Array.from({ length: COUNT }, (_, i) => {
    const text = TOGETHER.has(i) ? 'kestrel meets osprey, common' : i % 2 === 0 ? 'kestrel alone, common' : 'osprey alone, common';
    const input = checkpointInput.parse({ taskId: `task-${i % 100}`, agentId: 'agent-1', executionState: { completedItems: [text] } });
    return buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString());
  });
  for (let from = 0; from < COUNT; from += 1_000) {
    await harness.store.transact(async (tx) => {
      const repo = new Repository(tx, actor.tenant);
      for (const [i, checkpoint] of made.slice(from, from + 1_000).entries()) await inserter.insert(repo, checkpoint, from + i + 1);
    });
  }
  harness.finished.length = 0;
}, 120_000);

afterAll(async () => harness?.close());

/** Every page of a search, and the most keys one page's transaction read. */
async function allPages(q: string, limit: number): Promise<{ pages: string[][]; mostKeys: number }> {
  harness.finished.length = 0;
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await searchCheckpoints(harness.ctx, actor, { q, limit, ...(cursor ? { cursor } : {}) });
    pages.push(page.items.map((doc) => doc.checkpoint.id));
    cursor = page.nextCursor;
    expect(pages.length).toBeLessThan(100);
  } while (cursor !== undefined);
  const reads = harness.finished.filter((done) => done.readOnly);
  return { pages, mostKeys: Math.max(...reads.map((read) => read.keysRead)) };
}

describe('a search for two words', () => {
  it('finds exactly the checkpoints holding both, newest first, each once, every page within the read budget', async () => {
    const expected = made.filter((_, i) => TOGETHER.has(i)).map((c) => c.id).reverse();
    const { pages, mostKeys } = await allPages('osprey kestrel', 2);
    // Besides the page's budget, a search first reads the runs of its words: at most all of them, once each with the end of each
    // under its task (`runEnds`: the first row of ends of the runs that start where it starts, the task's open runs, the later
    // rows after the first, then its own key), and a probe of 17 keys a word.
    const runs = await harness.store.transact(async (tx) => {
      const repo = new Repository(tx, actor.tenant);
      const { runEnds } = keyspaceOf(actor.tenant);
      let keys = 0;
      for (const word of ['osprey', 'kestrel']) {
        const found = (await repo.terms.runs(repo.terms.word(word), 10_000))!;
        keys += 4 * found.length + 1 + 17;
        for (const { taskId, start } of found) {
          const first = runEnds.pack(taskId, start.createdAt, start.checkpointId, '');
          // A range read counts one key when it finds none (`store/limits.ts`).
          keys += Math.max(1, (await tx.getRange(Buffer.concat([first, Buffer.from([0])]), Buffer.concat([first, Buffer.from([0xff])]))).length);
        }
      }
      return keys;
    }, { readOnly: true });
    expect(pages.flat()).toEqual(expected);
    expect(mostKeys).toBeLessThanOrEqual(READ_BUDGET.keys + runs);
    // Some page spent its budget between two matches far apart and stopped short of its limit.
    expect(pages.slice(0, -1).some((page) => page.length < 2)).toBe(true);
  });

  it('costs a few keys a match when one word is rare, whichever word is longer', async () => {
    const expected = made.filter((_, i) => TOGETHER.has(i)).map((c) => c.id).reverse();
    const { pages, mostKeys } = await allPages('common meets', 10);
    expect(pages).toEqual([expected]);
    expect(mostKeys).toBeLessThan(10 * expected.length);
  });
});

describe('mergeRuns against a model', () => {
  const WORDS = ['wren', 'lark', 'kite'];

  it('pages through exactly the checkpoints holding every word, newest first, whatever the budget and the page size', async () => {
    let run = 0;
    const entry = fc.subarray(WORDS);
    await fc.assert(
      fc.asyncProperty(
        fc.array(entry, { minLength: 1, maxLength: 60 }),
        fc.subarray(WORDS, { minLength: 1 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 40 }),
        async (entries, asked, limit, keys) => {
          const tenant = `join-${run++}`;
          // Three tasks, interleaved; two checkpoints of different tasks may share a time.
          const made = entries.map((words, i) => {
            const input = checkpointInput.parse({ taskId: `task-${i % 3}`, agentId: 'agent-1', executionState: { completedItems: [words.join(' ') || 'nothing'] } });
            return { words, checkpoint: buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1) + Math.floor(i / 2) * 1000).toISOString()) };
          });
          await harness.store.transact(async (tx) => {
            const repo = new Repository(tx, tenant);
            const inserter = new Inserter();
            for (const [i, { checkpoint }] of made.entries()) await inserter.insert(repo, checkpoint, i + 1);
          });
          const expected = made
            .filter(({ words }) => asked.every((word) => words.includes(word)))
            .map(({ checkpoint }) => checkpoint)
            .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))
            .map((c) => c.id);

          const wordsOf = new Map(made.map(({ words, checkpoint }) => [checkpoint.id, words]));
          const found: string[] = [];
          let start: Bound | undefined;
          for (let page = 0; ; page++) {
            expect(page).toBeLessThan(4 * entries.length + 10);
            const stop = await harness.store.transact(
              async (tx) => {
                const repo = new Repository(tx, tenant);
                const onPage: string[] = [];
                const runs = present(await repo.terms.runs(repo.terms.word(asked[0]!), 1_000), 'sixty checkpoints have fewer than 1,000 runs');
                return mergeRuns(repo, runs, {}, start, new ReadBudget(tx, { keys, bytes: 1e9, ms: 1e9 }), async (hit) => {
                  // The other words are checked on the record, as a search does.
                  if (!asked.every((word) => wordsOf.get(hit.checkpointId)!.includes(word))) return false;
                  onPage.push(hit.checkpointId);
                  found.push(hit.checkpointId);
                  return onPage.length >= limit;
                });
              },
              { readOnly: true },
            );
            if (stop.exhausted) break;
            start = stop.resume;
          }
          expect(found).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
