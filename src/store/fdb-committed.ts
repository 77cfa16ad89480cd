/**
 * What this process's last commits over FoundationDB read, each key with
 * the value it had at its commit's version: a write of a task written here
 * lately reads those keys from here, at that version, instead of asking a
 * storage server (issue 44: a lone create over FoundationDB waited for two
 * round trips, its reads and its commit; now for its commit). The keys a
 * write reads are mostly the ones the last write of its task read (the
 * tenant's store format, the task's head, the fleet's settings); the keys it
 * only writes (the record, the audit entry, the indexes) are not kept.
 *
 * Why it is safe. A transaction that commits at version V had, at V, the
 * values it wrote, and the values it read without snapshot: had any of
 * those changed between its read version and V, its commit would have
 * conflicted. So "key K held value X at version V" is a fact, forever. A
 * later write transaction whose read version is V reads exactly X at K:
 * answering from here is the same read without the round trip, and the
 * key is added as a read conflict, as a read adds it. Its commit then lands
 * only if nothing it read changed after V, whoever changed it (another
 * instance, or another transaction of this one): else it conflicts, and
 * the store runs it again at once at a fresh read version (`fdb.ts`), as it
 * does for an attempt at the client's cached read version. A transaction
 * has one read version: the reads it asks for side by side first (a write
 * reads its header, head and settings together) choose the commit that
 * read the most of them, and from then on it reads from that commit's keys
 * only, everything else from the cluster at that version.
 *
 * Where other instances write the same keys (a fleet behind a balancer that
 * spreads a task's writes), the commit read from is mostly behind, and the
 * write runs twice. So the outcomes are counted: when more than
 * {@link CONFLICTS_PAUSE} of the writes that read from here in a window
 * ran again, the record is not read from for {@link PAUSE_MS} (its commits
 * are still recorded), and writes read as they did before it.
 *
 * Only while the cluster answered this store lately ({@link QUIET_MS}): a
 * write that reads nothing from the cluster first makes its commit the
 * first thing the cluster hears of it, and a commit cut off by a partition
 * ends with its outcome unknown, where a read cut off says plainly that
 * nothing was written (the service then queues the write, `submit.ts`).
 * Within a couple of milliseconds of an answer, a partition can strike a
 * write read from here no likelier than it could strike one between its
 * reads and its commit.
 *
 * Only writes read from here, and only their first attempt: a read-only
 * transaction has no commit to check its reads, and an attempt that ends
 * up writing nothing is run again at a fresh version (`fdb.ts`). Commits
 * older than {@link MAX_AGE_MS} are not used: FoundationDB serves reads at a
 * version up to ~5 s old, and an old version makes a conflict likelier.
 *
 * @module
 */

/** One commit's reads: each key (its bytes as latin1 text) with its value at the commit's version (undefined: absent). */
export interface CommittedReads {
  version: Buffer;
  values: ReadonlyMap<string, Buffer | undefined>;
  /** When it was recorded (ms, this process's clock). */
  at: number;
}

/**
 * How long a commit's reads may be read from (ms): inside FoundationDB's
 * 5 s of versions kept for reads, and longer than one caller going round a
 * thousand tasks at ~400 creates a second takes to come back to one.
 */
export const MAX_AGE_MS = 3_000;

/** Commits kept at most: ~4 keys each (a task's head ~270 bytes), so a few MB. */
export const CAPACITY = 8_192;

/**
 * The most keys of one commit recorded: a create reads ~4; a maintenance
 * write that read hundreds of records is not recorded (a few MB kept for
 * no later write to read).
 */
export const MAX_KEYS = 64;

/**
 * How recently (ms) the cluster must have answered this store (a read, a
 * commit) for a write to read from here: about the time between a write's
 * reads and its commit. A caller writing one create after another finds the
 * last one's answer under a millisecond old; a write after a pause reads
 * from the cluster.
 */
export const QUIET_MS = 2;

/** Outcomes counted in a window: the writes that read from a commit. */
const WINDOW = 200;
/** The share of them run again (a conflict, or a refusal on what they read) past which reading from commits pauses. */
export const CONFLICTS_PAUSE = 0.05;
/** How long reading from commits pauses (ms). */
export const PAUSE_MS = 30_000;

export class CommittedValues {
  /** By version (hex), oldest first. */
  private readonly commits = new Map<string, CommittedReads>();
  /** The version (hex) of the newest commit kept that read each key. */
  private readonly newest = new Map<string, string>();
  /** Writes that read from a commit in the current window, and how many of them ran again. */
  private outcomes = 0;
  private reruns = 0;
  /** Until when (ms) no write reads from here. */
  private pausedUntil = 0;
  /** When the cluster last answered the store (`performance.now()`, ms). */
  private answeredAt = -Infinity;

  constructor(
    private readonly capacity = CAPACITY,
    private readonly maxAgeMs = MAX_AGE_MS,
    private readonly quietMs = QUIET_MS,
  ) {}

  /** The cluster answered the store: a read or a commit came back. */
  answered(at = performance.now()): void {
    this.answeredAt = at;
  }

  /** Whether the cluster answered the store within {@link QUIET_MS}: only then may a write read from here. */
  heardLately(at = performance.now()): boolean {
    return at - this.answeredAt <= this.quietMs;
  }

  /**
   * The commit to read `ids` from: of the newest commits kept that read
   * each of them (recent enough), the one that read the most of them, the
   * newer on a tie; undefined when none did.
   */
  choose(ids: readonly string[], now = Date.now()): CommittedReads | undefined {
    if (now < this.pausedUntil) return undefined;
    let best: CommittedReads | undefined;
    let bestCount = 0;
    const seen = new Set<string>();
    for (const id of ids) {
      const version = this.newest.get(id);
      if (version === undefined || seen.has(version)) continue;
      seen.add(version);
      const commit = this.commits.get(version);
      if (commit === undefined || now - commit.at > this.maxAgeMs) continue;
      let count = 0;
      for (const other of ids) if (commit.values.has(other)) count += 1;
      if (count > bestCount || (count === bestCount && best !== undefined && Buffer.compare(commit.version, best.version) > 0)) {
        best = commit;
        bestCount = count;
      }
    }
    return best;
  }

  /**
   * A commit at `version` and the keys it read (without snapshot), each with
   * its value at that version (its own write, if it wrote the key); `changed`:
   * keys it changed without knowing their value (an atomic add), whose older
   * readings are forgotten.
   */
  record(version: Buffer, values: ReadonlyMap<string, Buffer | undefined>, changed: Iterable<string> = [], now = Date.now()): void {
    for (const id of changed) this.forget(id);
    if (values.size === 0 || values.size > MAX_KEYS) return;
    const hex = version.toString('hex');
    const commit: CommittedReads = { version, values, at: now };
    this.commits.delete(hex);
    this.commits.set(hex, commit);
    for (const id of values.keys()) this.newest.set(id, hex);
    for (const [oldest, old] of this.commits) {
      if (this.commits.size <= this.capacity && now - old.at <= this.maxAgeMs) break;
      this.commits.delete(oldest);
      for (const id of old.values.keys()) if (this.newest.get(id) === oldest) this.newest.delete(id);
    }
  }

  /** A write that read from a commit landed (`rerun` false), or was run again at a fresh version (`rerun` true). */
  outcome(rerun: boolean, now = Date.now()): void {
    this.outcomes += 1;
    if (rerun) this.reruns += 1;
    if (this.outcomes < WINDOW) return;
    if (this.reruns > this.outcomes * CONFLICTS_PAUSE) this.pausedUntil = now + PAUSE_MS;
    this.outcomes = 0;
    this.reruns = 0;
  }

  /** Whether writes read from here now (metrics, tests). */
  reading(now = Date.now()): boolean {
    return now >= this.pausedUntil;
  }

  /** Commits kept now (tests). */
  get size(): number {
    return this.commits.size;
  }

  private forget(id: string): void {
    const version = this.newest.get(id);
    if (version === undefined) return;
    this.newest.delete(id);
    const commit = this.commits.get(version);
    // The commit's other keys stay; this one is no longer read from it.
    if (commit !== undefined) (commit.values as Map<string, Buffer | undefined>).delete(id);
  }
}
