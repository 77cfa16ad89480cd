/**
 * Full-text search against a model: for random checkpoints made of words
 * (some rewritten by a later version), a search for one, two or three words,
 * followed page by page through its cursor, returns exactly the checkpoints
 * whose current text holds every word, in any case, newest first, each once.
 * Each run writes into a tenant of its own on one real LMDB store, so runs
 * also check that no tenant sees another's checkpoints.
 */
import { Inserter } from '../support/insert.js';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCheckpoint } from '../../src/domain/changes.js';
import { checkpointInput, type Checkpoint } from '../../src/domain/checkpoint.js';
import type { Actor } from '../../src/domain/commands.js';
import { newId } from '../../src/domain/ids.js';
import { queryTerms } from '../../src/domain/terms.js';
import { AppError } from '../../src/errors.js';
import { Repository, toStored } from '../../src/service/repository/repository.js';
import { searchCheckpoints } from '../../src/service/search.js';
import { serviceHarness, type ServiceHarness } from './service-context.js';

/** Words that collide in case and in Unicode form, a stop word and a one-letter word, which match nothing. */
const VOCABULARY = ['lease', 'Lease', 'LEASE', 'fencing', 'epoch', 'Über', 'über', 'ÜBER', 'café', 'cafe\u0301', '409', 'the', 'x'];
const SEPARATORS = [' ', ', ', '-', '\n', ' (', '); '];

const words = fc.array(fc.constantFrom(...VOCABULARY), { minLength: 0, maxLength: 5 });
const text = fc.tuple(words, fc.constantFrom(...SEPARATORS)).map(([list, separator]) => ({ list, text: list.join(separator) }));
const spec = fc.record({ first: text, rewrite: fc.option(text, { nil: undefined }) });

/** The model: a checkpoint holds a word when one of its words is the same, ignoring case and Unicode form. */
const same = (a: string, b: string) => a.normalize('NFKC').toLowerCase() === b.normalize('NFKC').toLowerCase();

let harness: ServiceHarness;
let run = 0;
beforeAll(async () => {
  harness = await serviceHarness();
});
afterAll(async () => harness?.close());

/** Every page of a search, following nextCursor until it is absent. */
async function allPages(actor: Actor, q: string, limit: number): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await searchCheckpoints(harness.ctx, actor, { q, limit, ...(cursor ? { cursor } : {}) });
    found.push(...page.items.map((doc) => doc.checkpoint.id));
    cursor = page.nextCursor;
    if (cursor === undefined) return found;
  }
  throw new Error('The search did not end in 100 pages.');
}

it('finds exactly the checkpoints whose current text holds every word, newest first, each once, in their own tenant only', async () => {
  const query = fc.array(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 3 });
  await fc.assert(
    fc.asyncProperty(fc.array(spec, { minLength: 1, maxLength: 10 }), query, fc.integer({ min: 1, max: 4 }), async (specs, asked, limit) => {
      const actor: Actor = { tenant: `prop-${run++}`, role: 'writer', subject: 'test' };
      const made: { checkpoint: Checkpoint; words: string[] }[] = [];
      await harness.store.transact(async (tx) => {
        const repo = new Repository(tx, actor.tenant);
        const inserter = new Inserter();
        for (const [i, { first }] of specs.entries()) {
          const input = checkpointInput.parse({ taskId: 'task-prop', agentId: 'agent-1', executionState: { completedItems: [first.text] } });
          const checkpoint = buildCheckpoint(input, newId(), new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString());
          await inserter.insert(repo, checkpoint, i + 1);
          made.push({ checkpoint, words: first.list });
        }
      });
      await harness.store.transact(async (tx) => {
        const repo = new Repository(tx, actor.tenant);
        for (const [i, { rewrite }] of specs.entries()) {
          if (rewrite === undefined) continue;
          const before = made[i]!.checkpoint;
          const after: Checkpoint = { ...before, version: 2, executionState: { ...before.executionState, completedItems: [rewrite.text] } };
          await repo.checkpoints.replace(before, toStored(before).stored, after, toStored(after).stored, i === specs.length - 1);
          made[i] = { checkpoint: after, words: rewrite.list };
        }
      });

      const q = asked.join(' ');
      const wanted = asked.filter((word) => queryTerms(word).length > 0);
      if (wanted.length === 0) {
        await expect(searchCheckpoints(harness.ctx, actor, { q, limit })).rejects.toBeInstanceOf(AppError);
        return;
      }
      const expected = made.filter(({ words: list }) => wanted.every((word) => list.some((w) => same(w, word)))).map(({ checkpoint }) => checkpoint.id).reverse();
      expect(await allPages(actor, q, limit)).toEqual(expected);
    }),
    { numRuns: 150 },
  );
});
