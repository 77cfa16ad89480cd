/**
 * Search over the secondary indexes. One index drives the scan (the most
 * selective filter given), newest first within the time range; the other
 * filters are checked on each record. Full text (`q`) is a filter like the
 * others: its words are looked up in the `term` index, and a record matches
 * when its terms hold every word of the query. A page stops when its
 * transaction's read budget is spent (keys, bytes and time, counted by the
 * store), so a rare match cannot make one request unbounded: the cursor then
 * carries on where the scan stopped.
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
import { filePaths, indexTerm, labelTerm, type CheckpointDoc, type Corruption, type IndexName } from './repository/repository.js';

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

/** Where a page stopped: createdAt and id, and the index scanned, so another query cannot reuse it. */
type Position = {
  c: string;
  i: string;
  x: string;
};

const isPosition = (value: unknown): value is Position =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { c?: unknown }).c === 'string' &&
  typeof (value as { i?: unknown }).i === 'string' &&
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

/** The index that drives the scan, with its value in index form. */
function drivingIndex(query: SearchQuery, terms: Terms): [IndexName, string] {
  const [name, value] = drivingFilter(query, terms);
  return [name, indexTerm(value)];
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
  const [name, value] = drivingIndex(query, terms);
  const scope = `${name}=${value}`;
  const position = decodeCursor(query.cursor, isPosition);
  if (position !== undefined && position.x !== scope) throw new AppError('invalid_cursor');
  const range = { ...(query.from !== undefined ? { from: query.from } : {}), ...(query.to !== undefined ? { to: query.to } : {}) };
  const { items, corrupt, stoppedAt, exhausted } = await snapshot(ctx, actor.tenant, async (repo) => {
    const items: CheckpointDoc[] = [];
    const corrupt: Corruption[] = [];
    const budget = repo.budget();
    let scanned = 0;
    let before = position === undefined ? undefined : { createdAt: position.c, checkpointId: position.i };
    // One more index entry tells whether a next page can exist at all; its key is kept back from the budget.
    const stop = async () => {
      const rest = await repo.index.scan(name, value, { ...range, ...(before ? { before } : {}), limit: 1 });
      return { items, corrupt, stoppedAt: before, exhausted: rest.length === 0 };
    };
    for (let first = true; ; first = false) {
      // The first batch is read whatever the budget, so every page makes progress.
      const room = first ? BATCH : Math.min(BATCH, Math.floor((budget.keysLeft() - 1) / ENTRY_KEYS));
      if (room <= 0) return stop();
      const hits = await repo.index.scan(name, value, { ...range, ...(before ? { before } : {}), limit: room });
      for (const hit of hits) {
        // Large records spend the bytes of the budget faster than its keys: checked per entry too.
        if (scanned > 0 && !budget.allows(ENTRY_KEYS + 1)) return stop();
        scanned += 1;
        before = { createdAt: hit.createdAt, checkpointId: hit.checkpointId };
        const loaded = await repo.checkpoints.current(hit.taskId, hit.checkpointId);
        if (loaded !== undefined) {
          if (!loaded.ok) corrupt.push(loaded.corruption);
          else if (matches(loaded.doc.checkpoint, query, terms)) items.push(loaded.doc);
        }
        if (items.length >= query.limit) return stop();
      }
      if (hits.length < room) return { items, corrupt, stoppedAt: before, exhausted: true };
    }
  });
  ctx.metrics.checkpointReadLatency.observe({ operation: 'search' }, performance.now() - started);
  await ctx.integrity.report(ctx, actor, corrupt);
  const page: Listed<CheckpointDoc> = { items };
  if (!exhausted && stoppedAt !== undefined) page.nextCursor = encodeCursor({ c: stoppedAt.createdAt, i: stoppedAt.checkpointId, x: scope } satisfies Position);
  if (corrupt.length > 0) page.corrupted = corrupt.map((c) => c.checkpointId);
  return page;
}
