/**
 * Search over the secondary indexes. One index drives the scan (the most
 * selective filter given), newest first within the time range; the other
 * filters are checked on each record. Full text (`q`) is a filter like the
 * others: its words are looked up in the `term` index (several words are
 * joined there, `search-join.ts`), and a record matches when its own terms
 * hold every word of the query. A page stops when its transaction's read
 * budget is spent (keys, bytes and time, counted by the store), so a rare
 * match cannot make one request unbounded: the cursor then carries on where
 * the scan stopped.
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import type { Actor } from '../domain/commands.js';
import { NO_QUERY_TERMS, queryTerms, termsOf } from '../domain/terms.js';
import { AppError } from '../errors.js';
import type { Listed } from './checkpoint-reads.js';
import { snapshot, type ServiceContext } from './context.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import {
  filePaths,
  indexTerm,
  labelTerm,
  type CheckpointDoc,
  type Corruption,
  type IndexHit,
  type IndexName,
  type ReadBudget,
  type Repository,
} from './repository/repository.js';
import { joinWords, scanBound, type Bound, type PageStop, type TimeRange } from './search-join.js';

export interface SearchQuery {
  taskId?: string;
  agentId?: string;
  agentType?: string;
  phase?: string;
  status?: string;
  finalStatus?: string;
  labels?: Record<string, string>;
  file?: string;
  from?: string;
  to?: string;
  q?: string;
  limit: number;
  cursor?: string;
}

/** Index entries one range read asks for. */
const BATCH = 200;
/** Keys one index entry costs: its row and the record it names (one key unless split). */
const ENTRY_KEYS = 2;

/**
 * Where a page stopped: createdAt and id, whether that entry itself is still
 * to consider (`a`, set when a join stopped on an undecided candidate), and
 * the scan's scope, so another query cannot reuse it.
 */
type Position = {
  c: string;
  i: string;
  a?: true;
  x: string;
};

const isPosition = (value: unknown): value is Position =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { c?: unknown }).c === 'string' &&
  typeof (value as { i?: unknown }).i === 'string' &&
  ((value as { a?: unknown }).a === undefined || (value as { a?: unknown }).a === true) &&
  typeof (value as { x?: unknown }).x === 'string';

/** The words of `q`, found once per request; absent when the query has no `q`. */
type Terms = readonly string[] | undefined;

/** The words of `q`; a `q` of punctuation and stop words alone could match nothing useful, and is refused. */
function termsOfQuery(query: SearchQuery): Terms {
  if (query.q === undefined) return undefined;
  const terms = queryTerms(query.q);
  if (terms.length === 0) throw new AppError('validation_failed', { errors: [{ field: 'query.q', message: NO_QUERY_TERMS }] });
  return terms;
}

/**
 * How a search reads: one index scanned newest first, the most selective
 * filter given; or, for `q` of several words and no taskId, file or label,
 * the words' entries joined (`search-join.ts`), the longest word first.
 */
type Plan = { join: false; name: IndexName; value: string; scope: string } | { join: true; words: string[]; scope: string };

function planOf(query: SearchQuery, terms: Terms): Plan {
  const [name, raw] = drivingFilter(query, terms);
  if (name === 'term' && terms !== undefined && terms.length > 1) {
    const words = [raw, ...terms.filter((term) => term !== raw)].map(indexTerm);
    // Words hold no space, so the joined scope names exactly these words.
    return { join: true, words, scope: `term=${indexTerm(words.join(' '))}` };
  }
  const value = indexTerm(raw);
  return { join: false, name, value, scope: `${name}=${value}` };
}

/** The filter that usually matches fewest checkpoints; of the words of `q`, the longest. */
function drivingFilter(query: SearchQuery, terms: Terms): [IndexName, string] {
  if (query.taskId !== undefined) return ['task', query.taskId];
  if (query.file !== undefined) return ['file', query.file];
  const label = Object.entries(query.labels ?? {})[0];
  if (label !== undefined) return ['label', `${label[0]}=${label[1]}`];
  if (terms !== undefined) return ['term', terms.reduce((longest, term) => (term.length > longest.length ? term : longest))];
  if (query.agentId !== undefined) return ['agent', query.agentId];
  if (query.finalStatus !== undefined) return ['finalStatus', query.finalStatus];
  if (query.agentType !== undefined) return ['agentType', query.agentType];
  if (query.phase !== undefined) return ['phase', query.phase];
  if (query.status !== undefined) return ['status', query.status];
  return ['all', ''];
}

/**
 * Whether the record meets every filter. Words are checked against the
 * record's own terms, not taken from the index that drove the scan, so an
 * index entry that no longer holds can cost a read but never a wrong result.
 */
export function matches(checkpoint: Checkpoint, query: SearchQuery, terms: Terms): boolean {
  if (query.taskId !== undefined && checkpoint.taskId !== query.taskId) return false;
  if (query.agentId !== undefined && checkpoint.agentId !== query.agentId) return false;
  if (query.agentType !== undefined && checkpoint.agentType !== query.agentType) return false;
  if (query.phase !== undefined && checkpoint.executionState.phase !== query.phase) return false;
  if (query.status !== undefined && checkpoint.status !== query.status) return false;
  if (query.finalStatus !== undefined && checkpoint.finalStatus !== query.finalStatus) return false;
  for (const [key, value] of Object.entries(query.labels ?? {})) {
    const actual = checkpoint.labels[key];
    if (actual === undefined || labelTerm(key, actual) !== labelTerm(key, value)) return false;
  }
  if (query.file !== undefined && !filePaths(checkpoint).has(query.file)) return false;
  if (query.from !== undefined && checkpoint.createdAt < query.from) return false;
  if (query.to !== undefined && checkpoint.createdAt > query.to) return false;
  if (terms !== undefined) {
    const found = termsOf(checkpoint);
    if (!terms.every((term) => found.has(term))) return false;
  }
  return true;
}

export async function searchCheckpoints(ctx: ServiceContext, actor: Actor, query: SearchQuery): Promise<Listed<CheckpointDoc>> {
  const started = performance.now();
  const terms = termsOfQuery(query);
  const plan = planOf(query, terms);
  const position = decodeCursor(query.cursor, isPosition);
  if (position !== undefined && position.x !== plan.scope) throw new AppError('invalid_cursor');
  const start: Bound | undefined = position === undefined ? undefined : { createdAt: position.c, checkpointId: position.i, inclusive: position.a === true };
  const range: TimeRange = { ...(query.from !== undefined ? { from: query.from } : {}), ...(query.to !== undefined ? { to: query.to } : {}) };
  const { items, corrupt, stop } = await snapshot(ctx, actor.tenant, async (repo) => {
    const items: CheckpointDoc[] = [];
    const corrupt: Corruption[] = [];
    /** Loads the record an entry names and keeps it when it matches; true once the page is full. */
    const consider = async (hit: IndexHit): Promise<boolean> => {
      const loaded = await repo.checkpoints.current(hit.taskId, hit.checkpointId);
      if (loaded !== undefined) {
        if (!loaded.ok) corrupt.push(loaded.corruption);
        else if (matches(loaded.doc.checkpoint, query, terms)) items.push(loaded.doc);
      }
      return items.length >= query.limit;
    };
    const budget = repo.budget();
    const stop = plan.join ? await joinWords(repo, plan.words, range, start, budget, consider) : await scanIndex(repo, plan, range, start, budget, consider);
    return { items, corrupt, stop };
  });
  ctx.metrics.checkpointReadLatency.observe({ operation: 'search' }, performance.now() - started);
  await ctx.integrity.report(ctx, actor, corrupt);
  const page: Listed<CheckpointDoc> = { items };
  if (!stop.exhausted && stop.resume !== undefined) {
    const { createdAt, checkpointId, inclusive } = stop.resume;
    page.nextCursor = encodeCursor({ c: createdAt, i: checkpointId, ...(inclusive ? { a: true } : {}), x: plan.scope } satisfies Position);
  }
  if (corrupt.length > 0) page.corrupted = corrupt.map((c) => c.checkpointId);
  return page;
}

/**
 * One index's entries newest first from `start`, in batches, each handed to
 * `consider`, until the page is full, the entries end or the read budget is
 * spent. The first batch is read whatever the budget, so every page makes
 * progress; one more entry, its key kept back from the budget, tells whether
 * a next page can exist at all.
 */
async function scanIndex(
  repo: Repository,
  plan: { name: IndexName; value: string },
  range: TimeRange,
  start: Bound | undefined,
  budget: ReadBudget,
  consider: (hit: IndexHit) => Promise<boolean>,
): Promise<PageStop> {
  const { name, value } = plan;
  let bound = start;
  let scanned = 0;
  const stop = async (): Promise<PageStop> => {
    const rest = await repo.index.scan(name, value, { ...range, ...scanBound(bound), limit: 1 });
    return { resume: bound, exhausted: rest.length === 0 };
  };
  for (let first = true; ; first = false) {
    const room = first ? BATCH : Math.min(BATCH, Math.floor((budget.keysLeft() - 1) / ENTRY_KEYS));
    if (room <= 0) return stop();
    const hits = await repo.index.scan(name, value, { ...range, ...scanBound(bound), limit: room });
    for (const hit of hits) {
      // Large records spend the bytes of the budget faster than its keys: checked per entry too.
      if (scanned > 0 && !budget.allows(ENTRY_KEYS + 1)) return stop();
      scanned += 1;
      bound = { createdAt: hit.createdAt, checkpointId: hit.checkpointId, inclusive: false };
      if (await consider(hit)) return stop();
    }
    if (hits.length < room) return { resume: bound, exhausted: true };
  }
}
