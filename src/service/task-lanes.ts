/**
 * Same-task writes take turns inside one process. Every write to a task
 * reads and writes its head, so on FoundationDB two writes of one task in
 * flight at once conflict and one of them runs again; queued on a lane per
 * task before they open a transaction, only writes from different instances
 * can still meet. On LMDB, whose single writer already serializes every
 * transaction without conflicts, a lane buys nothing and costs the group
 * commit (each write would wait for the previous one's fsync), so the lane
 * is on where conflicts exist (`BATON_TASK_LANES=auto`, the default).
 *
 * @module
 */

export class TaskLanes {
  /** The last write waiting or running on each lane; a lane with none is removed. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `work` after every earlier write of `lane` in this process has finished. */
  async run<T>(lane: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(lane);
    let finish!: () => void;
    const mine = new Promise<void>((resolve) => (finish = resolve));
    this.tails.set(lane, mine);
    try {
      if (before !== undefined) await before;
      return await work();
    } finally {
      finish();
      if (this.tails.get(lane) === mine) this.tails.delete(lane);
    }
  }
}
