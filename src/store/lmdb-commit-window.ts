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
 * The window holds a transaction's writes while there is something to wait
 * for, and hands the writes gathered to LMDB as one commit: while other
 * write transactions under way have not yet handed theirs (they will come
 * soon), or while a commit is in flight (the next cannot start before it
 * lands). It commits as soon as neither holds (the last writer under way
 * joined, the commit in flight landed, a writer left without writing), at
 * `windowMs` after it opened at the latest, or once it holds `maxParts`. A
 * transaction alone (a single agent, one create at a time) is never held:
 * its commit starts at once. Each transaction still resolves only after the
 * commit holding its writes is on disk.
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
  /** Whether a commit is in flight: the next one cannot start before it lands. */
  busy: () => boolean;
}

interface Open<P> {
  parts: P[];
  first: bigint;
  last: bigint;
  timer: NodeJS.Timeout;
  done: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class CommitWindow<P> {
  private open: Open<P> | undefined;

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
      if (open.parts.length >= this.options.maxParts || this.ready()) this.flush();
      return open.done;
    }
    if (this.options.windowMs <= 0 || background || this.ready()) return this.options.commit([part], sequence, sequence);
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const timer = setTimeout(() => this.flush(), this.options.windowMs);
    this.open = { parts: [part], first: sequence, last: sequence, timer, done, resolve, reject };
    return done;
  }

  /** Whether a window held now would wait for nothing: no other writer is still to hand its writes, and no commit is in flight. */
  private ready(): boolean {
    return this.options.waiting() === 0 && !this.options.busy();
  }

  /** Commits the window open if it now waits for nothing: called when a commit lands and when a writer leaves. */
  settle(): void {
    if (this.open !== undefined && this.ready()) this.flush();
  }

  /** Commits the window open now, if one is (before the store closes, or once it is full). */
  flush(): void {
    const open = this.open;
    if (open === undefined) return;
    this.open = undefined;
    clearTimeout(open.timer);
    // From a timer: a commit that throws rather than rejects must still answer its parts, not end the process.
    let committed: Promise<void>;
    try {
      committed = this.options.commit(open.parts, open.first, open.last);
    } catch (error) {
      committed = Promise.reject(error);
    }
    committed.then(open.resolve, open.reject);
  }
}
