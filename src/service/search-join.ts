/**
 * Full-text search for several words at once: a zig-zag join over their
 * `term` index entries, as the FoundationDB Record Layer intersects indexes
 * and Lucene intersects postings. Every word's entries are ordered newest
 * first by (createdAt, id); the join asks each word in turn for its newest
 * entry at or before the current candidate, and jumps to that older entry
 * whenever a word lacks the candidate. It therefore reads about as many
 * entries as the rarest word has near the matches, not every entry of the
 * longest word: scanning one word and checking the others on each record
 * filled a page with a rare pair only after reading a thousand records.
 *
 * @module
 */
import type { IndexHit, IndexPosition, ReadBudget, Repository } from './repository/repository.js';

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
  /** No entry is left that holds every word. */
  exhausted: boolean;
}

/** Keys kept back for the record of a match and its index entry's share. */
const RECORD_KEYS = 2;
/** The most entries one read of a word asks for. */
const MAX_BATCH = 128;

/** The bound in the form index scans take it. */
export function scanBound(bound: Bound | undefined): { before: IndexPosition } | { atOrBefore: IndexPosition } | Record<never, never> {
  if (bound === undefined) return {};
  const position = { createdAt: bound.createdAt, checkpointId: bound.checkpointId };
  return bound.inclusive ? { atOrBefore: position } : { before: position };
}

/**
 * Orders positions as their index keys do, older first: createdAt, then id.
 * Both are ASCII (ISO 8601 times, UUIDs), so string order is byte order.
 */
function compare(a: IndexPosition, b: IndexPosition): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.checkpointId < b.checkpointId ? -1 : a.checkpointId > b.checkpointId ? 1 : 0;
}

const same = (a: IndexPosition, b: IndexPosition | undefined): boolean => b !== undefined && compare(a, b) === 0;

/** Whether `hit` lies within `bound`: older than it, or it when inclusive. */
function within(hit: IndexPosition, bound: Bound | undefined): boolean {
  if (bound === undefined) return true;
  const order = compare(hit, bound);
  return order < 0 || (order === 0 && bound.inclusive);
}

/** Whether everything within `inner` is within `outer` too. */
function inside(inner: Bound | undefined, outer: Bound | undefined): boolean {
  if (outer === undefined) return true;
  if (inner === undefined) return false;
  const order = compare(inner, outer);
  return order < 0 || (order === 0 && (outer.inclusive || !inner.inclusive));
}

const at = (hit: IndexPosition): Bound => ({ createdAt: hit.createdAt, checkpointId: hit.checkpointId, inclusive: true });

/**
 * One word's entries, read newest first in batches. The join asks for the
 * newest entry within a bound that only moves older; a batch answers every
 * ask that lands inside it. The batch doubles while the join uses every entry
 * it read (the words alternate closely) and halves when the join jumps past
 * most of them (the other word is rarer), so both cases cost few reads and
 * few keys of the budget.
 */
class Postings {
  private rows: IndexHit[] = [];
  /** The first row not known to be newer than every bound asked since the read. */
  private next = 0;
  /** Rows handed out since the read. */
  private used = 0;
  private lastHanded = -1;
  /** The bound the rows were read within; `null` before the first read. */
  private readWithin: Bound | undefined | null = null;
  /** The read found fewer rows than it asked for: nothing older exists. */
  private ended = false;
  private batch = 1;
  private lastBound: Bound | undefined;

  constructor(
    private readonly repo: Repository,
    private readonly word: string,
    private readonly range: TimeRange,
  ) {}

  /** The newest entry within `bound`, undefined when none; `spent` when finding it would read more than `room` keys. */
  async newest(bound: Bound | undefined, room: number): Promise<IndexHit | undefined | 'spent'> {
    // The join's bounds only move older; should one not, the rows passed over are looked at again.
    if (!inside(bound, this.lastBound)) this.next = 0;
    this.lastBound = bound;
    if (this.readWithin !== null && inside(bound, this.readWithin)) {
      while (this.next < this.rows.length && !within(this.rows[this.next]!, bound)) this.next += 1;
      if (this.next < this.rows.length) return this.hand(this.next);
      if (this.ended) return undefined;
      if (this.used >= this.rows.length) this.batch = Math.min(MAX_BATCH, this.batch * 2);
      else if (2 * this.used < this.rows.length) this.batch = Math.max(1, this.batch / 2);
    }
    const limit = Math.min(this.batch, room);
    if (limit < 1) return 'spent';
    this.rows = await this.repo.index.scan('term', this.word, { ...this.range, ...scanBound(bound), limit });
    this.readWithin = bound;
    this.ended = this.rows.length < limit;
    this.next = 0;
    this.used = 0;
    this.lastHanded = -1;
    return this.rows.length === 0 ? undefined : this.hand(0);
  }

  private hand(row: number): IndexHit {
    if (row !== this.lastHanded) this.used += 1;
    this.lastHanded = row;
    return this.rows[row]!;
  }
}

/**
 * Hands `consider` every entry held by all of `words` (index values of the
 * `term` index), newest first from `start`, until it answers that the page is
 * full, no entry is left, or the read budget is spent. A page looks past its
 * start whatever the budget, so following its cursor always ends. With a full
 * page it looks for one more match, so that the last page has no cursor.
 */
export async function joinWords(
  repo: Repository,
  words: readonly string[],
  range: TimeRange,
  start: Bound | undefined,
  budget: ReadBudget,
  consider: (hit: IndexHit) => Promise<boolean>,
): Promise<PageStop> {
  const postings = words.map((word) => new Postings(repo, word, range));
  // Invariant: no entry newer than `upper` (nor `upper` itself unless inclusive) holds every word and is still to consider.
  let upper = start;
  let moved = false;
  let full = false;
  const moveTo = (hit: IndexHit): void => {
    if (same(hit, upper)) return;
    upper = at(hit);
    moved = true;
  };
  // Until the page has moved past its start, one key at a time is read whatever the budget.
  const room = (): number => (moved ? budget.keysLeft() - RECORD_KEYS : 1);

  for (;;) {
    let candidate = await postings[0]!.newest(upper, room());
    if (candidate === 'spent') return { resume: upper, exhausted: false };
    if (candidate === undefined) return { resume: upper, exhausted: true };
    moveTo(candidate);
    // Each word in turn, round and round, until every word holds the candidate.
    for (let agreed = 1, word = 1; agreed < words.length; word = (word + 1) % words.length) {
      const found = await postings[word]!.newest(at(candidate), room());
      if (found === 'spent') return { resume: upper, exhausted: false };
      if (found === undefined) return { resume: upper, exhausted: true };
      if (same(found, candidate)) agreed += 1;
      else {
        candidate = found;
        moveTo(found);
        agreed = 1;
      }
    }
    if (full) return { resume: upper, exhausted: false };
    full = await consider(candidate);
    upper = { createdAt: candidate.createdAt, checkpointId: candidate.checkpointId, inclusive: false };
    moved = true;
  }
}
