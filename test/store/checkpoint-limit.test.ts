/**
 * The configured checkpoint limit must fit an update, which writes the new
 * version and keeps the old one as a revision in one transaction, inside the
 * store's 10,000,000 bytes: a larger limit is refused at start with one
 * sentence, and the largest allowed one updates on a store enforcing it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, configSchema, loadConfig, MAX_CONFIGURABLE_CHECKPOINT_BYTES } from '../../src/config.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { STORE_LIMITS, type FinishedTransaction } from '../../src/store/store.js';
import { auth, checkpointBody, TOKENS } from '../support/app.js';

describe('BATON_MAX_CHECKPOINT_BYTES', () => {
  it('refuses a limit above what one transaction holds with its revision, in one sentence', () => {
    let error: unknown;
    try {
      loadConfig({ BATON_MAX_CHECKPOINT_BYTES: String(MAX_CONFIGURABLE_CHECKPOINT_BYTES + 1) });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { message } = error as ConfigError;
    expect(message).toMatch(/^The configuration is invalid: BATON_MAX_CHECKPOINT_BYTES: must be at most 4194304/);
    expect(message).toMatch(/previous version in one transaction of at most 10000000 bytes\.$/);
    expect(message.match(/\.\s+[A-Z]/g)).toBeNull();
    expect(loadConfig({ BATON_MAX_CHECKPOINT_BYTES: String(MAX_CONFIGURABLE_CHECKPOINT_BYTES) }).maxCheckpointBytes).toBe(MAX_CONFIGURABLE_CHECKPOINT_BYTES);
  });

  it('at its largest, still lets a checkpoint of that size be updated on a store that enforces the limits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-limit-'));
    const finished: FinishedTransaction[] = [];
    const store = LmdbStore.open({ path: dir, hooks: { onTransaction: (done) => finished.push(done) } });
    const config = configSchema.parse({ dataDir: dir, tokens: `writer:${TOKENS.writer}`, logLevel: 'silent', maxCheckpointBytes: MAX_CONFIGURABLE_CHECKPOINT_BYTES });
    const app = await buildApp({ config, store });
    try {
      // Room left for the rest of the canonical JSON, which the limit counts too. Random base64, as an
      // embedded file would be: records are stored compressed, and DEFLATE keeps about three quarters of it.
      const blob = randomBytes(MAX_CONFIGURABLE_CHECKPOINT_BYTES).toString('base64').slice(0, MAX_CONFIGURABLE_CHECKPOINT_BYTES - 2_000);
      const created = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('task-large', { extensions: { blob } }) });
      expect(created.statusCode).toBe(201);
      const id = (created.json() as { id: string }).id;
      const before = finished.length;
      const patched = await app.inject({ method: 'PATCH', url: `/v1/checkpoints/${id}`, headers: { ...auth(), 'if-match': '"1"' }, payload: { labels: { size: 'largest' } } });
      expect(patched.statusCode).toBe(200);
      // The update's commit, the largest since: background work may commit beside it.
      const update = finished.slice(before).filter((done) => done.committed).sort((a, b) => b.bytesWritten - a.bytesWritten)[0]!;
      // Both versions, the new one and the revision, in the one transaction.
      expect(update.bytesWritten).toBeGreaterThan(2 * 0.7 * (MAX_CONFIGURABLE_CHECKPOINT_BYTES - 2_000));
      expect(update.bytesWritten).toBeLessThanOrEqual(STORE_LIMITS.transactionBytes);
      const revisions = await app.inject({ method: 'GET', url: `/v1/checkpoints/${id}/revisions`, headers: auth() });
      expect((revisions.json() as { items: { version: number; verified: boolean }[] }).items).toEqual([
        expect.objectContaining({ version: 1, verified: true }),
        expect.objectContaining({ version: 2, verified: true }),
      ]);
    } finally {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
