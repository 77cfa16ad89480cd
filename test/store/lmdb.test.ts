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
