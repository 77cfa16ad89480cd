/**
 * An app over one LMDB data directory with an encryption key file beside
 * it, started, stopped and started again as a test changes the key file:
 * the setup the encryption tests share. `useKeyedApp` registers the cleanup
 * (the app started last and its store after each test, the directory after
 * the file).
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach } from 'vitest';
import { buildApp } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { TOKENS } from './app.js';

export interface KeyedApp {
  dir: string;
  dataDir: string;
  keyFile: string;
  /** Starts an app on the data directory, with the key file unless `withKeys` is false; a start that fails closes its store. */
  start(options?: { withKeys?: boolean; indexer?: 'on' | 'off' }): Promise<FastifyInstance>;
  /** The store of the app started last. */
  store(): LmdbStore;
  /** Closes the app started last and its store (a restart follows, or the test ends). */
  stop(): Promise<void>;
}

export function useKeyedApp(prefix: string): KeyedApp {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const dataDir = join(dir, 'data');
  const keyFile = join(dir, 'keys');
  let open: { app: FastifyInstance; store: LmdbStore } | undefined;
  const stop = async (): Promise<void> => {
    await open?.app.close();
    await open?.store.close();
    open = undefined;
  };
  afterEach(stop);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    dataDir,
    keyFile,
    async start({ withKeys = true, indexer = 'on' } = {}) {
      const config = configSchema.parse({
        dataDir,
        indexer,
        tokens: `writer:${TOKENS.writer},admin:${TOKENS.admin}`,
        logLevel: 'silent',
        ...(withKeys ? { encryptionKeyFile: keyFile } : {}),
      });
      const store = LmdbStore.open({ path: dataDir });
      try {
        const app = await buildApp({ config, store });
        open = { app, store };
        return app;
      } catch (error) {
        await store.close();
        throw error;
      }
    },
    store: () => open!.store,
    stop,
  };
}
