/**
 * Group commit across event turns, for the LMDB store (`lmdb.ts`).
 *
 * LMDB rewrites every page a commit touches and each page above it, and
 * fsyncs once a commit: a commit of one create writes ~40 pages, where a
 * commit shared by a few creates writes their leaves and shares the rest
 * (the branches, the free list, the meta page, the tails of the time-ordered
 * spaces). lmdb-js already joins the writes of one event turn, and those
 * queued while its writer is busy; at a steady few hundred creates a second
 * its writer is idle when each one arrives, so each commits alone.
 *
 * The window holds a transaction's writes and hands those gathered to LMDB
 * as one commit. It opens when there is something to wait for: other write
 * transactions under way that have not yet handed theirs (they will come
 * soon), or a commit in flight (the next cannot start before it lands). It
 * commits once a writer joins, or leaves without writing, and finds neither
 * (every writer under way has joined, no commit is in flight); at
 * `windowMs` after it opened at the latest; or once it holds `maxParts`. A
 * window that a commit in flight opened is not cut short when that commit
 * lands: writes arriving meanwhile join it, which is where a steady load's
 * commits are shared (an evenly paced load made ~1.5 commits a create
 * cutting it there, against ~2 holding it; `docs/performance.md`,
 * twenty-second stop). A transaction alone (a single agent, one create at a
 * time) is never held: its commit starts at once. Each transaction still
 * resolves only after the commit holding its writes is on disk.
 *
 * @module
 */

export interface CommitWindowOptions<P> {
  /** How long the first part held waits at most; 0 turns the window off. */
  windowMs: number;
  /** Parts gathered at which the window commits at once. */
  maxParts: number;
  /** Commits the parts in order, as one transaction; `first` is the first part's commit sequence. */
  commit: (parts: P[], first: bigint, last: bigint) => Promise<void>;
  /** Write transactions under way that have not yet handed their writes to the window. */
  waiting: () => number;
}

interface Open<P> {
  parts: P[];
  /** How many of the parts are callers' (not background). */
  callers: number;
  first: bigint;
  last: bigint;
  timer: NodeJS.Timeout;
  done: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class CommitWindow<P> {
  private open: Open<P> | undefined;
  /** Callers' parts in commits started and not yet settled: while there are any, a commit is in flight that the next must wait for. */
  private committing = 0;

  constructor(private readonly options: CommitWindowOptions<P>) {}

  /**
   * Commits `part` (sequence `sequence`, later than any given before):
   * joined to the window open, held in a new one while there is something
   * to wait for, at once otherwise. A `background` part (no caller waits
   * for it) joins a window open but opens none. Resolves when its commit is
   * durable.
   */
  add(part: P, sequence: bigint, background = false): Promise<void> {
    const open = this.open;
    if (open !== undefined) {
      open.parts.push(part);
      open.last = sequence;
      if (!background) open.callers += 1;
      if (open.parts.length >= this.options.maxParts || this.ready()) this.flush();
      return open.done;
    }
    if (this.options.windowMs <= 0 || background || this.ready()) return this.start([part], sequence, sequence, background ? 0 : 1);
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const timer = setTimeout(() => this.flush(), this.options.windowMs);
    this.open = { parts: [part], callers: 1, first: sequence, last: sequence, timer, done, resolve, reject };
    return done;
  }

  /** Whether a window held now would wait for nothing: no other writer is still to hand its writes, and no caller's commit is in flight. */
  private ready(): boolean {
    return this.options.waiting() === 0 && this.committing === 0;
  }

  /** Commits the window open if it now waits for nothing: the store calls it when a writer leaves. */
  settle(): void {
    if (this.open !== undefined && this.ready()) this.flush();
  }

  /** Commits the window open now, if one is (before the store closes, or once it is full). */
  flush(): void {
    const open = this.open;
    if (open === undefined) return;
    this.open = undefined;
    clearTimeout(open.timer);
    this.start(open.parts, open.first, open.last, open.callers).then(open.resolve, open.reject);
  }

  /** Starts the commit of `parts`, `callers` of them callers', counted as in flight until it settles. */
  private start(parts: P[], first: bigint, last: bigint, callers: number): Promise<void> {
    // From a timer: a commit that throws rather than rejects must still answer its parts, not end the process.
    let committed: Promise<void>;
    try {
      committed = this.options.commit(parts, first, last);
    } catch (error) {
      committed = Promise.reject(error);
    }
    if (callers === 0) return committed;
    this.committing += callers;
    const landed = (): void => {
      this.committing -= callers;
    };
    committed.then(landed, landed);
    return committed;
  }
}
