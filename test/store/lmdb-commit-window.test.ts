import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { CommitWindow } from '../../src/store/lmdb-commit-window.js';
import { LmdbStore } from '../../src/store/lmdb.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('CommitWindow', () => {
  function recorder(windowMs: number, maxParts = 100) {
    const commits: { parts: string[]; first: bigint; last: bigint }[] = [];
    let fail: Error | undefined;
    const window = new CommitWindow<string>({
      windowMs,
      maxParts,
      commit: async (parts, first, last) => {
        commits.push({ parts: [...parts], first, last });
        if (fail) throw fail;
      },
    });
    return { window, commits, failWith: (error: Error) => (fail = error) };
  }

  it('commits a part at once when no other write is under way', async () => {
    const { window, commits } = recorder(10_000);
    const done = window.add('a', 1n, 0);
    expect(commits).toEqual([{ parts: ['a'], first: 1n, last: 1n }]);
    await done;
  });

  it('holds a part while others are under way, and commits what joined it as one, in order', async () => {
    const { window, commits } = recorder(20);
    const first = window.add('a', 1n, 2);
    const second = window.add('b', 2n, 1);
    const third = window.add('c', 3n, 0);
    expect(commits).toEqual([]);
    await Promise.all([first, second, third]);
    expect(commits).toEqual([{ parts: ['a', 'b', 'c'], first: 1n, last: 3n }]);
  });

  it('commits at once once the window holds its most parts', async () => {
    const { window, commits } = recorder(60_000, 2);
    const held = window.add('a', 1n, 1);
    const full = window.add('b', 2n, 1);
    expect(commits).toEqual([{ parts: ['a', 'b'], first: 1n, last: 2n }]);
    await Promise.all([held, full]);
  });

  it('refuses every part of a commit that failed', async () => {
    const { window, failWith } = recorder(5);
    failWith(new Error('disk full'));
    const results = await Promise.allSettled([window.add('a', 1n, 1), window.add('b', 2n, 0)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  it('refuses the parts held when the commit throws instead of rejecting', async () => {
    const window = new CommitWindow<string>({
      windowMs: 5,
      maxParts: 10,
      commit: () => {
        throw new Error('environment closed');
      },
    });
    await expect(window.add('a', 1n, 1)).rejects.toThrow('environment closed');
  });

  it('a window of 0 never holds', () => {
    const { window, commits } = recorder(0);
    void window.add('a', 1n, 5);
    void window.add('b', 2n, 5);
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

  it('writes under way together share one commit, each answered once it is durable', async () => {
    const { commits, dir } = await scenario(2_000, async (store) => {
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
