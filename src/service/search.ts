/**
 * Search over the secondary indexes. One index drives the scan (the most
 * selective filter given), newest first within the time range; the other
 * filters are checked on each record. Full text (`q`) and file paths are
 * indexed as runs: the runs of the rarest are merged (`search-terms.ts`),
 * and a record matches when its own words and paths hold every one of the
 * query. A page
 * stops when its transaction's read budget is spent (keys, bytes and time,
 * counted by the store), so a rare match cannot make one request unbounded:
 * the cursor then carries on where the scan stopped.
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
  comparePositions,
  filePaths,
  IndexRows,
  indexTerm,
  labelTerm,
  fileWord,
  type CheckpointDoc,
  type Corruption,
  type IndexHit,
  type IndexName,
  type ReadBudget,
  type Repository,
  type PendingEntry,
  type TermRun,
} from './repository/repository.js';
import { PENDING_LIMIT } from './indexer/limits.js';
import { MAX_OPEN_RUNS, MAX_RUNS, mergeRuns, scanBound, within, type Bound, type LegacyIndex, type PageStop, type TimeRange } from './search-terms.js';

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
 * How a search reads. A taskId scans the task's index. Otherwise the runs
 * of a file path given are merged (`search-terms.ts`), with the `file` index
 * entries that releases before its runs wrote; then a label's index is
 * scanned; then the runs of the rarest word of `q` are merged. The other
 * filters are checked on each record. When the path or every word is too
 * common for runs (past {@link MAX_RUNS} runs, or open in more than
 * {@link MAX_OPEN_RUNS} tasks), or none is given, one index is scanned: the
 * next filter's, down to every checkpoint. All read newest first, so a
 * cursor of one serves the other.
 */
type Plan = {
  /** The index scanned when no runs drive. */
  name: IndexName;
  value: string;
  /** A file path given, as a run word, with the index its older entries are in. */
  path: { word: string; legacy: LegacyIndex } | undefined;
  /** The words of `q`, when they may drive. */
  words: readonly string[] | undefined;
  scope: string;
};

function planOf(query: SearchQuery, terms: Terms): Plan {
  const [name, raw] = drivingFilter(query);
  const byTask = query.taskId !== undefined;
  const label = firstLabel(query);
  const path = !byTask && query.file !== undefined ? { word: fileWord(query.file), legacy: { name: 'file' as const, value: indexTerm(query.file) } } : undefined;
  const words = terms !== undefined && !byTask && label === undefined ? terms : undefined;
  const [scanName, scanValue] = byTask ? [name, raw] : label !== undefined ? (['label', label] as const) : scanFilter(query);
  // Words hold no space, so the joined scope names exactly these words.
  const scope = `${words === undefined ? '' : `term=${indexTerm(words.join(' '))}&`}${name}=${indexTerm(raw)}`;
  return { name: scanName, value: indexTerm(scanValue), path, words, scope };
}

/** The filter that usually matches fewest checkpoints: the one the cursor's scope names. */
function drivingFilter(query: SearchQuery): [IndexName, string] {
  if (query.taskId !== undefined) return ['task', query.taskId];
  if (query.file !== undefined) return ['file', query.file];
  const label = firstLabel(query);
  if (label !== undefined) return ['label', label];
  return scanFilter(query);
}

function firstLabel(query: SearchQuery): string | undefined {
  const label = Object.entries(query.labels ?? {})[0];
  return label === undefined ? undefined : labelTerm(label[0], label[1]);
}

/** The index scanned when no runs drive and no taskId or label is given. */
function scanFilter(query: SearchQuery): [IndexName, string] {
  if (query.agentId !== undefined) return ['agent', query.agentId];
  if (query.finalStatus !== undefined) return ['finalStatus', query.finalStatus];
  if (query.agentType !== undefined) return ['agentType', query.agentType];
  if (query.phase !== undefined) return ['phase', query.phase];
  if (query.status !== undefined) return ['status', query.status];
  return ['all', ''];
}

/** The runs that drive a page, and the index of older entries merged with them. */
type Driver = { runs: TermRun[]; legacy: LegacyIndex | undefined };

/**
 * A path first (its runs and its older index entries), then the words of
 * `q`. Checkpoints whose words wait in the pending list (`pending-terms.ts`)
 * count as runs of one beside the merged runs, so a checkpoint is found the
 * moment its create commits; a list longer than the indexer lets it grow
 * ({@link PENDING_LIMIT}) is not read, and the page scans an index instead.
 */
async function driverOf(repo: Repository, plan: Plan): Promise<Driver | undefined> {
  const waiting = await repo.terms.waiting(PENDING_LIMIT);
  if (waiting === undefined) return undefined;
  if (plan.path !== undefined) {
    const runs = await rarestRuns(repo, [plan.path.word], waiting);
    if (runs !== undefined) return { runs, legacy: plan.path.legacy };
  }
  if (plan.words === undefined) return undefined;
  const runs = await rarestRuns(repo, plan.words, waiting);
  return runs === undefined ? undefined : { runs, legacy: undefined };
}

/**
 * The runs of the word of `words` that has the fewest, undefined when every
 * word has more than {@link MAX_RUNS}. Each word is asked for a few runs
 * first and for up to {@link MAX_RUNS} only when none fits, so a rare word
 * beside a common one costs about as many keys as the rare word has runs,
 * and a common word at most one read of MAX_RUNS keys. The `waiting`
 * checkpoints that hold a word are runs of one of it.
 */
async function rarestRuns(repo: Repository, words: readonly string[], waiting: readonly PendingEntry[]): Promise<TermRun[] | undefined> {
  const keys = words.map((word) => ({ key: repo.terms.word(word), pending: waitingRuns(waiting, repo.terms.word(word), indexTerm(word)) }));
  for (let limit = FIRST_RUNS; ; limit = MAX_RUNS) {
    let rarest: TermRun[] | undefined;
    for (const { key, pending } of keys) {
      const room = (rarest === undefined ? limit : rarest.length - 1) - pending.length;
      const merged = room < 0 ? undefined : await repo.terms.runs(key, room);
      const runs = merged === undefined ? undefined : merged.concat(pending);
      // Each open run costs a read before the page can start: a word open in many tasks is common.
      if (runs !== undefined && runs.filter((run) => run.last === undefined).length <= MAX_OPEN_RUNS) rarest = runs;
      if (rarest?.length === 0) return rarest;
    }
    if (rarest !== undefined || limit === MAX_RUNS) return rarest;
  }
}

/** The waiting checkpoints that hold a word (as the index spells it, or plain, from before encryption was on), as runs of one. */
function waitingRuns(waiting: readonly PendingEntry[], key: string, plain: string): TermRun[] {
  const runs: TermRun[] = [];
  for (const entry of waiting) {
    if (entry.words.includes(key) || (plain !== key && entry.words.includes(plain))) runs.push({ taskId: entry.taskId, start: entry.at, last: entry.at });
  }
  return runs;
}

/** The runs each word is asked for first. */
const FIRST_RUNS = 16;

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
    const probes = plan.path !== undefined || plan.words !== undefined;
    const driver = probes ? await driverOf(repo, plan) : undefined;
    const scan = driver === undefined ? await indexPlanOf(repo, plan, range, start) : undefined;
    // The probes (of the runs, bounded by MAX_RUNS a word; of the pending list, by PENDING_LIMIT) come first; the page's own reads get the whole budget after them.
    const budget = repo.budget(probes || scan?.listed === true);
    const stop = driver !== undefined ? await mergeRuns(repo, driver.runs, range, start, budget, consider, driver.legacy) : await scanIndex(repo, scan!, range, start, budget, consider);
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

/** The index a page scans, with the waiting checkpoints to take in their places (newest first). */
interface IndexPlan {
  name: IndexName;
  value: string;
  waiting: IndexHit[];
  /** Whether the pending list was read for it (a probe: the page's budget starts after it). */
  listed: boolean;
}

/**
 * What a page of `plan`'s index reads. A create writes only its `all` and
 * `task` entries; the others wait in the pending list with its words until
 * the indexer merges them (`indexes.ts`), so a scan of those reads the list
 * beside the index, as `q` does, and a checkpoint is found the moment its
 * create commits. A list longer than the indexer lets it grow
 * ({@link PENDING_LIMIT}) is not read: the page scans `all` instead, which
 * holds every checkpoint, and each record is checked.
 */
async function indexPlanOf(repo: Repository, plan: { name: IndexName; value: string }, range: TimeRange, start: Bound | undefined): Promise<IndexPlan> {
  if (IndexRows.writtenAtCreate(plan.name)) return { ...plan, waiting: [], listed: false };
  const waiting = await repo.terms.waiting(PENDING_LIMIT);
  if (waiting === undefined) return { name: 'all', value: '', waiting: [], listed: true };
  return { ...plan, waiting: waitingHits(repo, waiting, plan, range, start), listed: true };
}

/** The waiting checkpoints whose entries left to the merge hold `(name, value)`, within the range and the bound, newest first. */
function waitingHits(repo: Repository, waiting: readonly PendingEntry[], plan: { name: IndexName; value: string }, range: TimeRange, start: Bound | undefined): IndexHit[] {
  const hits: IndexHit[] = [];
  const finds = repo.index.finds(plan.name, plan.value);
  for (const entry of waiting) {
    const { createdAt, checkpointId } = entry.at;
    if ((range.from !== undefined && createdAt < range.from) || (range.to !== undefined && createdAt > range.to) || !within(entry.at, start)) continue;
    if (entry.index.some(finds)) hits.push({ createdAt, checkpointId, taskId: entry.taskId });
  }
  return hits.sort((a, b) => comparePositions(b, a));
}

/**
 * One index's entries newest first from `start`, in batches, with `waiting`
 * (entries not in the index yet, newest first) in their places, each handed
 * to `consider`, until the page is full, the entries end or the read budget
 * is spent. The first batch is read whatever the budget, so every page makes
 * progress; one more entry, its key kept back from the budget, tells whether
 * a next page can exist at all.
 */
async function scanIndex(
  repo: Repository,
  plan: IndexPlan,
  range: TimeRange,
  start: Bound | undefined,
  budget: ReadBudget,
  consider: (hit: IndexHit) => Promise<boolean>,
): Promise<PageStop> {
  const { name, value, waiting } = plan;
  let bound = start;
  let scanned = 0;
  let next = 0;
  const listed = new Set(waiting.map((hit) => hit.checkpointId));
  const stop = async (): Promise<PageStop> => {
    if (next < waiting.length) return { resume: bound, exhausted: false };
    const rest = await repo.index.scan(name, value, { ...range, ...scanBound(bound), limit: 1 });
    return { resume: bound, exhausted: rest.length === 0 };
  };
  /** Hands one entry on; 'full' once the page is, 'spent' when the budget is. */
  const visit = async (hit: IndexHit): Promise<'full' | 'spent' | undefined> => {
    // Large records spend the bytes of the budget faster than its keys: checked per entry too.
    if (scanned > 0 && !budget.allows(ENTRY_KEYS + 1)) return 'spent';
    scanned += 1;
    bound = { createdAt: hit.createdAt, checkpointId: hit.checkpointId, inclusive: false };
    return (await consider(hit)) ? 'full' : undefined;
  };
  for (let first = true; ; first = false) {
    const room = first ? BATCH : Math.min(BATCH, Math.floor((budget.keysLeft() - 1) / ENTRY_KEYS));
    if (room <= 0) return stop();
    const hits = await repo.index.scan(name, value, { ...range, ...scanBound(bound), limit: room });
    for (const hit of hits) {
      while (next < waiting.length && comparePositions(waiting[next]!, hit) > 0) {
        const outcome = await visit(waiting[next]!);
        if (outcome === 'spent') return stop();
        next += 1;
        if (outcome === 'full') return stop();
      }
      // Merged since the list was read, or indexed both ways: considered once, in the list's place.
      if (listed.has(hit.checkpointId)) continue;
      const outcome = await visit(hit);
      if (outcome !== undefined) return stop();
    }
    if (hits.length < room) {
      while (next < waiting.length) {
        const outcome = await visit(waiting[next]!);
        if (outcome === 'spent') return stop();
        next += 1;
        if (outcome === 'full') return stop();
      }
      return { resume: bound, exhausted: true };
    }
  }
}
