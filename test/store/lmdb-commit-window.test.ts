import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { CommitWindow } from '../../src/store/lmdb-commit-window.js';
import { LmdbStore } from '../../src/store/lmdb.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('CommitWindow', () => {
  /**
   * A window over a recorded commit; `state.waiting` says how many writers
   * are still to hand their writes, and each commit lands when `land()` is
   * called (all of them if `state.landAtOnce`).
   */
  function recorder(windowMs: number, maxParts = 100) {
    const commits: { parts: string[]; first: bigint; last: bigint }[] = [];
    const state = { waiting: 0, landAtOnce: true };
    const inFlight: (() => void)[] = [];
    let fail: Error | undefined;
    const window = new CommitWindow<string>({
      windowMs,
      maxParts,
      commit: (parts, first, last) => {
        commits.push({ parts: [...parts], first, last });
        if (fail) return Promise.reject(fail);
        if (state.landAtOnce) return Promise.resolve();
        return new Promise<void>((resolve) => inFlight.push(resolve));
      },
      waiting: () => state.waiting,
    });
    const land = async () => {
      for (const resolve of inFlight.splice(0)) resolve();
      await new Promise((resolve) => setImmediate(resolve));
    };
    return { window, commits, state, land, failWith: (error: Error) => (fail = error) };
  }

  it('commits a part at once when nothing is under way', async () => {
    const { window, commits } = recorder(10_000);
    const done = window.add('a', 1n);
    expect(commits).toEqual([{ parts: ['a'], first: 1n, last: 1n }]);
    await done;
  });

  it('holds parts while other writers are still to hand theirs, and commits them as one, in order, when the last joins', async () => {
    const { window, commits, state } = recorder(60_000);
    state.waiting = 2;
    const first = window.add('a', 1n);
    state.waiting = 1;
    const second = window.add('b', 2n);
    expect(commits).toEqual([]);
    state.waiting = 0;
    const third = window.add('c', 3n);
    // Not the window's minute: the last writer under way joined.
    expect(commits).toEqual([{ parts: ['a', 'b', 'c'], first: 1n, last: 3n }]);
    await Promise.all([first, second, third]);
  });

  it('holds parts while a commit is in flight, and commits them when a writer joins with none in flight', async () => {
    const { window, commits, state, land } = recorder(60_000);
    state.landAtOnce = false;
    const inFlight = window.add('a', 1n);
    const second = window.add('b', 2n);
    const third = window.add('c', 3n);
    expect(commits).toEqual([{ parts: ['a'], first: 1n, last: 1n }]);
    await land();
    // A window a commit in flight opened is not cut short when it lands: what arrives meanwhile joins it.
    expect(commits).toHaveLength(1);
    state.landAtOnce = true;
    const fourth = window.add('d', 4n);
    expect(commits[1]).toEqual({ parts: ['b', 'c', 'd'], first: 2n, last: 4n });
    await Promise.all([inFlight, second, third, fourth]);
  });

  it('commits what it holds when a writer it waited for leaves without writing', async () => {
    const { window, commits, state } = recorder(60_000);
    state.waiting = 1;
    const held = window.add('a', 1n);
    expect(commits).toEqual([]);
    state.waiting = 0;
    window.settle();
    expect(commits).toEqual([{ parts: ['a'], first: 1n, last: 1n }]);
    await held;
  });

  it('commits at the end of the window what is still waiting for a writer', async () => {
    const { window, commits, state } = recorder(20);
    state.waiting = 3;
    const held = window.add('a', 1n);
    await held;
    expect(commits).toEqual([{ parts: ['a'], first: 1n, last: 1n }]);
  });

  it('commits at once once the window holds its most parts', async () => {
    const { window, commits, state } = recorder(60_000, 2);
    state.waiting = 5;
    const held = window.add('a', 1n);
    const full = window.add('b', 2n);
    expect(commits).toEqual([{ parts: ['a', 'b'], first: 1n, last: 2n }]);
    await Promise.all([held, full]);
  });

  it('a background part joins a window open but opens none, and its commit in flight holds no caller', async () => {
    const { window, commits, state, land } = recorder(60_000);
    state.landAtOnce = false;
    const background = window.add('merge', 1n, true);
    const caller = window.add('a', 2n);
    expect(commits.map((c) => c.parts)).toEqual([['merge'], ['a']]);
    const held = window.add('b', 3n);
    const joined = window.add('merge', 4n, true);
    expect(commits).toHaveLength(2);
    await land();
    state.landAtOnce = true;
    window.settle();
    expect(commits[2]).toEqual({ parts: ['b', 'merge'], first: 3n, last: 4n });
    await Promise.all([background, caller, held, joined]);
  });

  it('refuses every part of a commit that failed', async () => {
    const { window, state, failWith } = recorder(5);
    failWith(new Error('disk full'));
    state.waiting = 1;
    const first = window.add('a', 1n);
    state.waiting = 0;
    const results = await Promise.allSettled([first, window.add('b', 2n)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  it('refuses the parts held when the commit throws instead of rejecting', async () => {
    const window = new CommitWindow<string>({
      windowMs: 5,
      maxParts: 10,
      commit: () => {
        throw new Error('environment closed');
      },
      waiting: () => 1,
    });
    await expect(window.add('a', 1n)).rejects.toThrow('environment closed');
  });

  it('a window of 0 never holds', () => {
    const { window, commits, state } = recorder(0);
    state.waiting = 5;
    state.landAtOnce = false;
    void window.add('a', 1n);
    void window.add('b', 2n);
    expect(commits.map((c) => c.parts)).toEqual([['a'], ['b']]);
  });
});

describe('LmdbStore with a commit window', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** LMDB's own count of commits in the directory (the store closed). */
  function lmdbCommits(dir: string): number {
    const env = open({ path: dir, readOnly: true });
    try {
      return (env.getStats() as { lastTxnId: number }).lastTxnId;
    } finally {
      void env.close();
    }
  }

  async function scenario(windowMs: number, run: (store: LmdbStore) => Promise<void>): Promise<{ commits: number; dir: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'baton-window-'));
    dirs.push(dir);
    let store = LmdbStore.open({ path: dir, commitWindowMs: windowMs });
    await store.transact(async (tx) => tx.set(Buffer.from('warm'), Buffer.from('up')));
    await store.close();
    const before = lmdbCommits(dir);
    store = LmdbStore.open({ path: dir, commitWindowMs: windowMs });
    await run(store);
    await store.close();
    return { commits: lmdbCommits(dir) - before, dir };
  }

  const key = (i: number) => Buffer.from(`k${i}`);

  it('writes under way together share one commit, each answered once it is durable, without waiting out the window', async () => {
    const started = Date.now();
    const { commits, dir } = await scenario(5_000, async (store) => {
      // Five writers at once: each body waits a little, so the others queue behind it and are under way when it commits.
      await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          store.transact(async (tx) => {
            await sleep(5);
            tx.set(key(i), Buffer.from(`v${i}`));
          }),
        ),
      );
    });
    expect(commits).toBe(1);
    // The fifth writer joined the four before it: nothing was left to wait for, so the window did not run its 5 s.
    expect(Date.now() - started).toBeLessThan(4_000);
    const reopened = LmdbStore.open({ path: dir });
    const values = await reopened.transact(async (tx) => Promise.all(Array.from({ length: 5 }, async (_, i) => (await tx.get(key(i)))?.toString())), { readOnly: true });
    await reopened.close();
    expect(values).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
  });

  it('a write alone is not held: one agent writing one at a time commits each at once', async () => {
    const started = Date.now();
    const { commits } = await scenario(5_000, async (store) => {
      for (let i = 0; i < 5; i++) await store.transact(async (tx) => tx.set(key(i), Buffer.from('v')));
    });
    expect(commits).toBe(5);
    // Held, five writes would take 25 s.
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('a background write under way does not hold a caller\'s write', async () => {
    const started = Date.now();
    await scenario(5_000, async (store) => {
      const background = store.transact(
        async (tx) => {
          tx.set(key(1), Buffer.from('merge'));
        },
        { background: true },
      );
      const caller = store.transact(async (tx) => tx.set(key(2), Buffer.from('create')));
      await Promise.all([background, caller]);
    });
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});
