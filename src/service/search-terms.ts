/**
 * Full-text search over the word runs of `repository/terms.ts`: the runs of
 * one word, across its tasks, merged newest first. A run's checkpoints are
 * the entries of its task's `task` index between the run's ends; a closed
 * run names its newest checkpoint, so a run of one checkpoint (a rare word)
 * costs no read at all, and a longer one is read in batches only as far as
 * the page goes. Runs may cover more than holds the word (`terms.ts`): the
 * caller checks each record's own words. A word with more runs than
 * {@link MAX_RUNS} is common: the caller scans another index instead.
 *
 * @module
 */
import type { IndexHit, IndexName, IndexPosition, ReadBudget, Repository, TermRun } from './repository/repository.js';
import { comparePositions } from './repository/repository.js';

/** Where a page starts or stops: entries older than this one, or also this one when `inclusive`. */
export interface Bound extends IndexPosition {
  inclusive: boolean;
}

/** The time range of a search, as index scans take it. */
export interface TimeRange {
  from?: string;
  to?: string;
}

export interface PageStop {
  /** Where the next page starts: nothing newer is left to find. */
  resume: Bound | undefined;
  /** No entry is left to consider. */
  exhausted: boolean;
}

/**
 * The most runs of one word that a search merges. Reading them is one range
 * read, counted in the page's read budget; a rare word has about one run per
 * checkpoint that holds it. Past this, the word is common enough that
 * scanning newest first and checking each record finds a page sooner.
 */
export const MAX_RUNS = 1_500;

/**
 * The most open runs (the word is in the task's newest checkpoint) a merge
 * takes: each costs a read before the first match is known.
 */
export const MAX_OPEN_RUNS = 256;

/** Entries one read of a run asks for. */
const RUN_BATCH = 8;
/** Keys kept back for the record of a match. */
const RECORD_KEYS = 2;

/** The bound in the form index scans take it. */
export function scanBound(bound: Bound | undefined): { before: IndexPosition } | { atOrBefore: IndexPosition } | Record<never, never> {
  if (bound === undefined) return {};
  const position = { createdAt: bound.createdAt, checkpointId: bound.checkpointId };
  return bound.inclusive ? { atOrBefore: position } : { before: position };
}

/** Whether `position` lies within `bound`: older than it, or it when inclusive. */
export function within(position: IndexPosition, bound: Bound | undefined): boolean {
  if (bound === undefined) return true;
  const order = comparePositions(position, bound);
  return order < 0 || (order === 0 && bound.inclusive);
}

/** An index's entries to merge beside the runs: the `file` entries of checkpoints written before paths were runs. */
export interface LegacyIndex {
  name: IndexName;
  value: string;
}

/** Older than every position: where a legacy index's "run" starts. */
const ORIGIN: IndexPosition = { createdAt: '', checkpointId: '' };

/**
 * One run's checkpoints within the page, newest first, read as the merge
 * reaches them; or, given `legacy`, one index's entries, as one run across
 * every task.
 */
class RunReader {
  /** Checkpoints of the run known and not yet handed out, newest first. */
  private known: IndexHit[] = [];
  /** Every checkpoint of the run not yet read is within this bound. */
  private bound: Bound | undefined;
  private ended = false;

  constructor(
    readonly run: TermRun,
    start: Bound | undefined,
    private readonly range: TimeRange,
    private readonly legacy?: LegacyIndex,
  ) {
    const { last } = run;
    if (last !== undefined && within(last, start)) {
      // The run's newest checkpoint is named by the run itself: no read for it.
      this.known = [{ ...last, taskId: run.taskId }];
      this.bound = { ...last, inclusive: false };
    } else this.bound = start;
  }

  /** The newest checkpoint known, or else the bound of the unread ones (undefined: no bound); null when none is left. */
  top(): { known: IndexPosition } | { unread: Bound | undefined } | null {
    if (this.known.length > 0) return { known: this.known[0]! };
    // Nothing of the run is left within the bound once its first checkpoint is past it.
    if (this.ended || (this.bound !== undefined && !within(this.run.start, this.bound))) return null;
    return { unread: this.bound };
  }

  take(): IndexHit {
    return this.known.shift()!;
  }

  /** Reads the next batch of the run's checkpoints from its task's `task` index (or from the legacy index). */
  async read(repo: Repository, limit: number): Promise<void> {
    const { run, legacy } = this;
    const from = this.range.from !== undefined && this.range.from > run.start.createdAt ? this.range.from : run.start.createdAt;
    const hits =
      legacy === undefined
        ? await repo.index.scan('task', run.taskId, { ...scanBound(this.bound), from, limit })
        : await repo.index.scan(legacy.name, legacy.value, { ...scanBound(this.bound), ...(this.range.from !== undefined ? { from: this.range.from } : {}), limit });
    for (const hit of hits) {
      if (comparePositions(hit, run.start) < 0) {
        this.ended = true;
        break;
      }
      this.known.push({ createdAt: hit.createdAt, checkpointId: hit.checkpointId, taskId: hit.taskId });
    }
    if (hits.length < limit) this.ended = true;
    const oldest = hits[hits.length - 1];
    if (oldest !== undefined) this.bound = { createdAt: oldest.createdAt, checkpointId: oldest.checkpointId, inclusive: false };
  }
}

type Top = NonNullable<ReturnType<RunReader['top']>>;

/** Which of two tops is newer: a known checkpoint before an unread bound at the same place. */
function newer(a: Top, b: Top): boolean {
  const pa = 'known' in a ? a.known : a.unread;
  const pb = 'known' in b ? b.known : b.unread;
  if (pa === undefined) return pb !== undefined || 'unread' in b;
  if (pb === undefined) return false;
  const order = comparePositions(pa, pb);
  return order !== 0 ? order > 0 : 'known' in a;
}

/**
 * Hands `consider` every checkpoint of `runs` (one word's), and of the
 * `legacy` index's entries when given, newest first from `start`, within
 * `range`, until it answers that the page is full, none is left, or the
 * read budget is spent. Reads up to the first checkpoint are made whatever
 * the budget, so following the cursor always ends; with a full page it
 * looks for one more checkpoint, so that the last page has no cursor.
 */
export async function mergeRuns(
  repo: Repository,
  runs: readonly TermRun[],
  range: TimeRange,
  start: Bound | undefined,
  budget: ReadBudget,
  consider: (hit: IndexHit) => Promise<boolean>,
  legacy?: LegacyIndex,
): Promise<PageStop> {
  const upper = range.to === undefined ? start : tighter(start, { createdAt: range.to, checkpointId: '\uffff', inclusive: true });
  const readers = runs.map((run) => new RunReader(run, upper, range));
  if (legacy !== undefined) readers.push(new RunReader({ taskId: '', start: ORIGIN, last: undefined }, upper, range, legacy));
  const heap = new ReaderHeap(readers);
  let resume = start;
  let seen: IndexPosition | undefined;
  let full = false;
  for (;;) {
    const best = heap.peek();
    if (best === undefined) return { resume, exhausted: true };
    const top = best.top()!;
    if ('unread' in top) {
      // Until the page has moved past its start it reads whatever the budget (at most a read per run), so every page makes progress.
      if (resume !== start && !budget.allows(RUN_BATCH + RECORD_KEYS)) return { resume, exhausted: false };
      await best.read(repo, RUN_BATCH);
      heap.settle();
      continue;
    }
    const position = best.take();
    heap.settle();
    if (range.from !== undefined && position.createdAt < range.from) continue;
    // Runs of one task may overlap where a checkpoint lost a word and gained it back: each checkpoint once.
    if (seen !== undefined && comparePositions(position, seen) === 0) continue;
    seen = position;
    if (full) return { resume, exhausted: false };
    if (!budget.allows(RECORD_KEYS) && resume !== start) return { resume, exhausted: false };
    resume = { createdAt: position.createdAt, checkpointId: position.checkpointId, inclusive: false };
    full = await consider(position);
  }
}

/**
 * The readers with something left, the newest top first: a binary heap, so
 * a merge of a thousand runs costs a few comparisons a step, not a thousand.
 * Only the top reader changes between steps ({@link settle}).
 */
class ReaderHeap {
  private readonly items: { reader: RunReader; top: Top }[];

  constructor(readers: RunReader[]) {
    this.items = [];
    for (const reader of readers) {
      const top = reader.top();
      if (top !== null) this.items.push({ reader, top });
    }
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  peek(): RunReader | undefined {
    return this.items[0]?.reader;
  }

  /** Puts the top reader back in its place after it read or handed out a checkpoint; drops it when done. */
  settle(): void {
    const first = this.items[0];
    if (first === undefined) return;
    const top = first.reader.top();
    if (top === null) {
      const last = this.items.pop()!;
      if (this.items.length === 0) return;
      this.items[0] = last;
    } else first.top = top;
    this.down(0);
  }

  private down(at: number): void {
    const { items } = this;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let best = at;
      if (left < items.length && newer(items[left]!.top, items[best]!.top)) best = left;
      if (right < items.length && newer(items[right]!.top, items[best]!.top)) best = right;
      if (best === at) return;
      [items[at], items[best]] = [items[best]!, items[at]!];
      at = best;
    }
  }
}

/** The narrower of two upper bounds. */
function tighter(a: Bound | undefined, b: Bound): Bound {
  if (a === undefined) return b;
  return within(a, b) ? a : b;
}
