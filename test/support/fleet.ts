/**
 * A fleet of real Baton processes over one store (DESIGN §10): each started
 * as `npm start` does (`startBaton`), on its own port and its own queue
 * directory, killable with `kill -9` and restartable on the same directories.
 * Over FoundationDB every fleet gets its own `BATON_FDB_PREFIX`, cleared
 * when it stops; `fleetStore()` says which store a fleet can run on here, and
 * why not when it cannot.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startBaton, stopBaton, tempDataDir, type RunningServer } from './crash-server.js';
import type { Launcher } from './server.js';

export interface FleetOptions {
  /** How many instances; each gets its own port and queue directory. */
  size: number;
  /** Environment for every instance (tokens and store settings are the harness's unless given here). */
  env?: Record<string, string>;
  /** Environment for one instance only, by index. */
  envOf?: (index: number) => Record<string, string>;
  /** Command-line flags for every instance (`--enable-fault-injection`). */
  args?: readonly string[];
  /**
   * A cluster of the caller's own instead of `FDB_CLUSTER_FILE`'s, which the
   * caller removes whole: the fleet then leaves its keys there when it stops
   * (the partition scenarios' cluster is not reachable from the test process).
   */
  clusterFile?: string;
  /** How instance `index` is started (inside a network namespace); a plain spawn when absent. */
  launcherOf?: (index: number) => Launcher;
}

export interface Instance {
  readonly index: number;
  readonly url: string;
  readonly pid: number;
  /** What the process printed so far. */
  output(): string;
  /** Whether the process still runs (a partition must never end one). */
  alive(): boolean;
}

export interface Fleet {
  readonly instances: readonly Instance[];
  /** The FoundationDB prefix this fleet's data lives under. */
  readonly prefix: string;
  at(index: number): Instance;
  /** `kill -9`: no shutdown, no drain; the instance's directories stay for its restart. */
  kill(index: number): Promise<void>;
  /** Starts instance `index` again on the same queue directory (and a new port). */
  restart(index: number, env?: Record<string, string>): Promise<Instance>;
  /** Stops every instance and removes the fleet's directories and keys. */
  stop(): Promise<void>;
}

/** Whether a fleet can run here: FoundationDB with a cluster file, or why not. */
export function fleetStore(): { ok: true; clusterFile: string } | { ok: false; reason: string } {
  const clusterFile = process.env.FDB_CLUSTER_FILE;
  if (!clusterFile) return { ok: false, reason: 'skipped: the fleet suites run several Baton processes over one FoundationDB cluster; set FDB_CLUSTER_FILE to a reachable cluster to run them' };
  return { ok: true, clusterFile };
}

/** Starts `options.size` instances over the FoundationDB cluster of `FDB_CLUSTER_FILE`, side by side. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const store: ReturnType<typeof fleetStore> = options.clusterFile !== undefined ? { ok: true, clusterFile: options.clusterFile } : fleetStore();
  if (!store.ok) throw new Error(store.reason);
  const prefix = `fleet-${randomUUID()}`;
  const root = tempDataDir('baton-fleet-');
  // Over FoundationDB instances share no disk: the fleet's one signing key is configured on each.
  writeFileSync(join(root, 'signing-key.pem'), generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  const running: (RunningServer | undefined)[] = [];
  const instances: Instance[] = [];
  const envFor = (index: number, extra: Record<string, string> = {}): Record<string, string> => {
    const dir = join(root, `instance-${index}`);
    mkdirSync(dir, { recursive: true });
    return {
      BATON_STORE: 'fdb',
      FDB_CLUSTER_FILE: store.clusterFile,
      BATON_FDB_PREFIX: prefix,
      BATON_QUEUE_DIR: join(dir, 'queue'),
      // Each instance's own LMDB directory is never opened over FoundationDB; its signing key is the fleet's.
      BATON_DATA_DIR: dir,
      BATON_SIGNING_KEY_FILE: join(root, 'signing-key.pem'),
      ...options.env,
      ...(options.envOf?.(index) ?? {}),
      ...extra,
    };
  };
  const launch = async (index: number, extra?: Record<string, string>): Promise<Instance> => {
    const server = await startBaton(join(root, `instance-${index}`), envFor(index, extra), 60_000, options.args ?? [], options.launcherOf?.(index));
    running[index] = server;
    const alive = (): boolean => server.child.exitCode === null && server.child.signalCode === null;
    const instance: Instance = { index, url: server.url, pid: server.child.pid!, output: server.output, alive };
    instances[index] = instance;
    return instance;
  };
  try {
    // The first instance writes the store's header; the others join it.
    await launch(0);
    await Promise.all(Array.from({ length: options.size - 1 }, (_, i) => launch(i + 1)));
  } catch (error) {
    await Promise.all(running.map((server) => stopBaton(server?.child)));
    removeDir(root);
    throw error;
  }
  return {
    instances,
    prefix,
    at: (index) => instances[index]!,
    async kill(index) {
      const server = running[index];
      if (!server) return;
      server.child.kill('SIGKILL');
      await new Promise<void>((resolve) => (server.child.exitCode !== null || server.child.signalCode !== null ? resolve() : server.child.once('exit', () => resolve())));
      running[index] = undefined;
    },
    restart: (index, env) => launch(index, env),
    async stop() {
      await Promise.all(running.map((server) => stopBaton(server?.child)));
      removeDir(root);
      if (options.clusterFile === undefined) await clearPrefix(store.clusterFile, prefix);
    },
  };
}

/** Removes every key of a fleet's prefix. */
async function clearPrefix(clusterFile: string, prefix: string): Promise<void> {
  const { FdbStore } = await import('../../src/store/fdb.js');
  const root = await FdbStore.open({ clusterFile, prefix: '' });
  try {
    await root.transact(async (tx) => tx.clearPrefix(Buffer.from(prefix)));
  } finally {
    await root.close();
  }
}
