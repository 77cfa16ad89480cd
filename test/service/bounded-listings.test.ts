/**
 * DESIGN §2: every listing that could outgrow one transaction answers in
 * pages. A task with 20,000 revisions of one checkpoint and 20,000
 * descendants of it is written straight through the repository (in batches,
 * each transaction inside the store's limits), then listed through the
 * service; the store's own counters show that no read transaction went past
 * the read budget.
 */
import { Inserter } from '../support/insert.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_HASH } from '../../src/domain/audit.js';
import { buildCheckpoint } from '../../src/domain/changes.js';
import type { Checkpoint } from '../../src/domain/checkpoint.js';
import type { Actor } from '../../src/domain/commands.js';
import { newId } from '../../src/domain/ids.js';
import type { LineagePage } from '../../src/domain/views.js';
import { checkpointLineage, checkpointRevisions, taskHistory } from '../../src/service/checkpoint-reads.js';
import type { Page } from '../../src/service/cursor.js';
import { READ_BUDGET, Repository, toStored } from '../../src/service/repository/repository.js';
import { searchCheckpoints } from '../../src/service/search.js';
import { STORE_LIMITS } from '../../src/store/store.js';
import { serviceHarness, type ServiceHarness } from './service-context.js';

const TASK = 'task-bounded';
const REVISIONS = 20_000;
/** Children of the root besides the first link of the chain. */
const DIRECT = 9_999;
/** The chain under the root: each the child of the one before. */
const CHAIN = 10_001;
const BATCH = 1_000;
/** A page limit above any listing here, so that only the read budget ends a page. */
const UNLIMITED = 1_000_000;
const actor: Actor = { tenant: 'default', role: 'writer', subject: 'test' };
const at = (ms: number): string => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

let harness: ServiceHarness;
let root: Checkpoint;
let rootChildren: string[];
let chain: string[];

/** Runs `write` for each of `count` items, `BATCH` items per transaction. */
async function inBatches(count: number, write: (repo: Repository, index: number) => Promise<void> | void): Promise<void> {
  for (let from = 0; from < count; from += BATCH) {
    await harness.store.transact(async (tx) => {
      const repo = new Repository(tx, actor.tenant);
      for (let i = from; i < Math.min(count, from + BATCH); i++) await write(repo, i);
    });
  }
}

function checkpoint(id: string, ms: number, parentId?: string): Checkpoint {
  const input = { taskId: TASK, agentId: 'agent-1', executionState: { phase: 'implementing' as const, currentFocus: 'listing' }, ...(parentId ? { parentId } : {}) };
  return buildCheckpoint(input, id, at(ms));
}

beforeAll(async () => {
  const inserter = new Inserter();
  harness = await serviceHarness();
  root = checkpoint(newId(), 0);
  let seq = 1;
  await harness.store.transact(async (tx) => inserter.insert(new Repository(tx, actor.tenant), root, seq));

  let current = root;
  await inBatches(REVISIONS, async (repo, i) => {
    const next: Checkpoint = { ...current, version: current.version + 1, updatedAt: at(i + 1), labels: { round: String(i) } };
    await repo.checkpoints.replace(current, toStored(current).stored, next, toStored(next).stored, true);
    current = next;
  });

  chain = [];
  rootChildren = [];
  const descendants: { id: string; parentId: string }[] = [];
  for (let i = 0; i < CHAIN; i++) {
    const id = newId();
    descendants.push({ id, parentId: i === 0 ? root.id : chain[i - 1]! });
    chain.push(id);
  }
  rootChildren.push(chain[0]!);
  for (let i = 0; i < DIRECT; i++) {
    const id = newId();
    descendants.push({ id, parentId: root.id });
    rootChildren.push(id);
  }
  await inBatches(descendants.length, async (repo, i) => {
    const { id, parentId } = descendants[i]!;
    const child = checkpoint(id, REVISIONS + 1 + i, parentId);
    repo.links.link(parentId, id);
    await inserter.insert(repo, child, ++seq);
  });
  await harness.store.transact(async (tx) =>
    new Repository(tx, actor.tenant).tasks.putHead({ taskId: TASK, seq, latestId: chain[chain.length - 1]!, audit: { seq: 0, hash: GENESIS_HASH }, createdAt: at(0), updatedAt: at(0) }),
  );
  harness.finished.length = 0;
}, 120_000);

afterAll(async () => harness?.close());

/** Every page of a listing, following `nextCursor` until it is absent. */
async function allPages<P extends { nextCursor?: string }>(read: (cursor: string | undefined) => Promise<P>): Promise<P[]> {
  const pages: P[] = [];
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    pages.push(page);
    cursor = page.nextCursor;
    expect(pages.length).toBeLessThan(1_000);
  } while (cursor !== undefined);
  return pages;
}

/** Every read since the last call stayed inside the budget, by the store's counters. */
function expectWithinBudget(): number {
  const reads = harness.finished.filter((done) => done.readOnly);
  expect(reads.length).toBeGreaterThan(0);
  for (const read of reads) {
    expect(read.keysRead).toBeLessThanOrEqual(READ_BUDGET.keys);
    expect(read.elapsedMs).toBeLessThan(STORE_LIMITS.transactionMs);
  }
  const most = Math.max(...reads.map((read) => read.keysRead));
  harness.finished.length = 0;
  return most;
}

describe('a task with 20,000 revisions and 20,000 descendants', () => {
  it('lists every revision, oldest first, the current version last, in pages within the budget', async () => {
    const pages = await allPages((cursor) => checkpointRevisions(harness.ctx, actor, root.id, { limit: UNLIMITED, ...(cursor ? { cursor } : {}) }));
    const versions = pages.flatMap((page: Page<{ version: number; verified: boolean }>) => page.items.map((item) => item.version));
    expect(versions).toEqual(Array.from({ length: REVISIONS + 1 }, (_, i) => i + 1));
    expect(pages.every((page) => page.items.every((item) => item.verified))).toBe(true);
    expect(pages.length).toBeGreaterThanOrEqual(REVISIONS / READ_BUDGET.keys);
    expect(expectWithinBudget()).toBeGreaterThan(READ_BUDGET.keys / 2);
  });

  it('lists the root children in id order, in pages within the budget', async () => {
    const pages = await allPages((cursor) => checkpointLineage(harness.ctx, actor, root.id, { limit: UNLIMITED, ...(cursor ? { cursor } : {}) }) as Promise<LineagePage>);
    expect(pages.flatMap((page) => page.ancestors)).toEqual([]);
    expect(pages.flatMap((page) => page.children.map((node) => node.id))).toEqual([...rootChildren].sort());
    expect(pages.length).toBeGreaterThan(1);
    expectWithinBudget();
  });

  it('lists the 10,001 ancestors of the deepest descendant, nearest first, in pages within the budget', async () => {
    const leaf = chain[chain.length - 1]!;
    const pages = await allPages((cursor) => checkpointLineage(harness.ctx, actor, leaf, { limit: UNLIMITED, ...(cursor ? { cursor } : {}) }) as Promise<LineagePage>);
    const ancestors = pages.flatMap((page) => page.ancestors.map((node) => node.id));
    expect(ancestors).toEqual([...chain.slice(0, -1).reverse(), root.id]);
    expect(pages.flatMap((page) => page.children)).toEqual([]);
    expect(pages.length).toBeGreaterThan(1);
    expectWithinBudget();
  });

  it("lists the task's 20,001 checkpoints newest first, and finds them all by search, in pages within the budget", async () => {
    const history = await allPages((cursor) => taskHistory(harness.ctx, actor, TASK, 1_000, cursor));
    expect(history.flatMap((page) => page.items).length).toBe(CHAIN + DIRECT + 1);
    expectWithinBudget();
    const found = await allPages((cursor) => searchCheckpoints(harness.ctx, actor, { taskId: TASK, limit: 1_000, ...(cursor ? { cursor } : {}) }));
    expect(new Set(found.flatMap((page) => page.items.map((doc) => doc.checkpoint.id))).size).toBe(CHAIN + DIRECT + 1);
    expectWithinBudget();
  });

  it('carries a search for a rare match across pages that the budget cut short', async () => {
    const found = await allPages((cursor) => searchCheckpoints(harness.ctx, actor, { taskId: TASK, agentId: 'agent-1', q: 'no such text', limit: 10, ...(cursor ? { cursor } : {}) }));
    expect(found.flatMap((page) => page.items)).toEqual([]);
    expect(found.length).toBeGreaterThanOrEqual((CHAIN + DIRECT) / READ_BUDGET.keys);
    expectWithinBudget();
  });
});
