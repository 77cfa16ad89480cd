import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbStore } from '../../src/store/lmdb.js';
import type { Store } from '../../src/store/store.js';
import { runConformance } from './conformance/suite.js';

runConformance({
  name: 'lmdb',
  async create(options = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'baton-lmdb-'));
    let store: Store = LmdbStore.open({ path: dir, ...options });
    return {
      store,
      config: { store: 'lmdb', dataDir: dir, fdbPrefix: '' },
      async reopen() {
        store = LmdbStore.open({ path: dir, ...options });
        return store;
      },
      async destroy() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});

// The same contract with the commit window the service runs with (`BATON_COMMIT_WINDOW_MS`, default 4).
runConformance({
  name: 'lmdb with a commit window',
  async create(options = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'baton-lmdb-window-'));
    let store: Store = LmdbStore.open({ path: dir, commitWindowMs: 4, ...options });
    return {
      store,
      config: { store: 'lmdb', dataDir: dir, fdbPrefix: '', commitWindowMs: 4 },
      async reopen() {
        store = LmdbStore.open({ path: dir, commitWindowMs: 4, ...options });
        return store;
      },
      async destroy() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});
