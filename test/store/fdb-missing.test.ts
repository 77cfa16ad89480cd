import { describe, expect, it } from 'vitest';
import { FdbStore, loadBinding } from '../../src/store/fdb.js';
import { openStore } from '../../src/store/open.js';
import { StoreError } from '../../src/store/store.js';

/** Only meaningful where the client cannot load; elsewhere fdb.test.ts covers the store. */
const clientLoads = await loadBinding().then(
  () => true,
  () => false,
);

describe.skipIf(clientLoads)('fdb store without the FoundationDB client', () => {
  it('rejects opening with one not_configured sentence that says what to install', async () => {
    const direct = await FdbStore.open({ prefix: 'missing' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    const chosen = await openStore({ store: 'fdb', dataDir: './unused', fdbPrefix: '' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    for (const error of [direct, chosen]) {
      expect(error).toBeInstanceOf(StoreError);
      const { code, retriable, message } = error as StoreError;
      expect(code).toBe('not_configured');
      expect(retriable).toBe(false);
      expect(message).toMatch(/libfdb_c 7\.2 or newer/);
      expect(message).toMatch(/npm package foundationdb/);
      expect(message).toMatch(/install both/);
      // One sentence: a single full stop, at the end (abbreviations and versions aside).
      expect(message.endsWith('.')).toBe(true);
      expect(message.match(/\.\s+[A-Z]/g)).toBeNull();
    }
  });
});
