import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StartedTestContainer } from 'testcontainers';
import { describe, it } from 'vitest';
import { FdbStore, loadBinding } from '../../src/store/fdb.js';
import type { Store } from '../../src/store/store.js';
import type { StoreInitializer } from './conformance/initializer.js';
import { runConformance } from './conformance/suite.js';

/** The server image; keep its minor version equal to the client library's. */
const FDB_IMAGE = 'foundationdb/foundationdb:7.3.63';

type Cluster = { clusterFile: string } | { docker: true } | { missing: string };

/** Where this run finds FoundationDB, decided before the suite registers so a skip is visible. */
async function findCluster(): Promise<Cluster> {
  const fromEnv = process.env.FDB_CLUSTER_FILE;
  const found: Cluster | undefined = fromEnv ? { clusterFile: fromEnv } : (await dockerAnswers()) ? { docker: true } : undefined;
  if (found === undefined) return { missing: 'no FoundationDB reachable (set FDB_CLUSTER_FILE or run a Docker engine)' };
  try {
    await loadBinding();
  } catch {
    return { missing: 'a FoundationDB cluster is configured, but its client is not installed (libfdb_c 7.2 or newer and the npm package foundationdb)' };
  }
  return found;
}

function dockerAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('docker', ['info'], { timeout: 5_000 }, (error) => resolve(error === null));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('No port was assigned.'))));
    });
  });
}

/**
 * Starts a one-process FoundationDB in Docker. The server advertises the port
 * it listens on, and clients dial exactly that, so the host port must equal
 * the container port: a fixed P:P binding in host networking mode.
 */
async function startContainer(): Promise<{ clusterFile: string; stop(): Promise<void> }> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const port = await freePort();
  const container = await new GenericContainer(FDB_IMAGE)
    .withEnvironment({ FDB_NETWORKING_MODE: 'host', FDB_PORT: String(port) })
    .withExposedPorts({ container: port, host: port })
    .withWaitStrategy(Wait.forLogMessage('FDBD joined cluster'))
    .withStartupTimeout(90_000)
    .start();
  try {
    await untilOutput(container, 'configure new single memory', /Database created|already exists/);
    await untilOutput(container, 'status minimal', /The database is available/);
  } catch (error) {
    await container.stop();
    throw error;
  }
  const dir = mkdtempSync(join(tmpdir(), 'baton-fdb-'));
  const clusterFile = join(dir, 'fdb.cluster');
  writeFileSync(clusterFile, `docker:docker@127.0.0.1:${port}\n`);
  return {
    clusterFile,
    async stop() {
      await container.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs an fdbcli command in the container until its output matches, for at most a minute. */
async function untilOutput(container: StartedTestContainer, command: string, expected: RegExp): Promise<void> {
  const deadline = Date.now() + 60_000;
  let output = '';
  while (Date.now() < deadline) {
    ({ output } = await container.exec(['fdbcli', '--exec', command]));
    if (expected.test(output)) return;
    await sleep(1_000);
  }
  throw new Error(`fdbcli --exec "${command}" never printed ${expected}; last output: ${output}`);
}

const cluster = await findCluster();

if ('missing' in cluster) {
  if (process.env.BATON_REQUIRE_FDB === '1') {
    describe('store conformance: fdb', () => {
      it('needs a reachable FoundationDB cluster', () => {
        throw new Error(`BATON_REQUIRE_FDB=1, but ${cluster.missing}.`);
      });
    });
  } else {
    runConformance({ name: 'fdb', skipReason: `skipped: ${cluster.missing}`, create: () => Promise.reject(new Error('skipped')) });
  }
} else {
  runConformance(fdbInitializer(cluster));
}

function fdbInitializer(found: { clusterFile: string } | { docker: true }): StoreInitializer {
  let clusterFile = 'clusterFile' in found ? found.clusterFile : undefined;
  let stopContainer: (() => Promise<void>) | undefined;
  /** Opened at the root so it can clear each test's prefix as an ordinary range. */
  let root: Store | undefined;

  return {
    name: 'fdb',
    async beforeAll() {
      if (clusterFile !== undefined) return;
      const started = await startContainer();
      clusterFile = started.clusterFile;
      stopContainer = () => started.stop();
    },
    async afterAll() {
      await root?.close();
      await stopContainer?.();
    },
    async create(options = {}) {
      if (clusterFile === undefined) throw new Error('The FoundationDB cluster did not start.');
      const file = clusterFile;
      const prefix = `test-${randomUUID()}`;
      root ??= await FdbStore.open({ clusterFile: file, prefix: '' });
      const cleaner = root;
      let store: Store = await FdbStore.open({ clusterFile: file, prefix, ...options });
      return {
        store,
        config: { store: 'fdb', dataDir: '', fdbClusterFile: file, fdbPrefix: prefix },
        async reopen() {
          store = await FdbStore.open({ clusterFile: file, prefix, ...options });
          return store;
        },
        async destroy() {
          await store.close();
          await cleaner.transact(async (tx) => tx.clearPrefix(Buffer.from(prefix)));
        },
      };
    },
  };
}
