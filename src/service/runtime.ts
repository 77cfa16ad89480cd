/**
 * The service runtime: everything a running Baton owns besides its HTTP
 * server. `openRuntime` builds the service context over an open store and
 * opens the write queue; `start` starts the replayer and the sweepers;
 * `close` stops them (finishing the write in progress) and closes the
 * queue. The HTTP app, the CLI and the MCP server all run over one runtime,
 * so none of them wires the service itself. The store is the caller's: it
 * is opened before the runtime and closed after it.
 *
 * @module
 */
import { join } from 'node:path';
import type { Config } from '../config.js';
import { FullDisk } from '../fs/free-space.js';
import { createMetrics, type Metrics } from '../metrics.js';
import { startReplayer, type Replayer } from '../queue/replayer.js';
import { WriteQueue } from '../queue/write-queue.js';
import { FaultInjectingStore } from '../store/faults.js';
import type { Store } from '../store/store.js';
import type { ServiceContext, ServiceLogger } from './context.js';
import { EventNotifier } from './fleet/event-feed.js';
import { integrityRecorder } from './integrity.js';
import { startLeaseSweeper } from './lease-sweeper.js';
import { startMaintenance } from './maintenance/runner.js';
import { startOperationSweeper } from './operation-sweeper.js';
import { MissingKeyError, openPlain } from '../crypto/keyring.js';
import { loadOrCreateSigner, loadSigner, type Signer } from './signing.js';
import { isOutage, runTransaction, storeCause } from './transactions.js';
import { adoptKeyLayout, forgetKeyLayout, zstdMissing } from './repository/repository.js';
import { checkKeys, missingKey, stopRekey, Vault } from './vault.js';
import { TaskLanes } from './task-lanes.js';
import { Indexer } from './indexer/indexer.js';
import { PendingGate } from './indexer/pending-gate.js';
import { runsApartStore } from './indexer/runs-apart.js';
import { adoptSettings, settingsOf } from './fleet/settings.js';
import { announceInstance, instanceId, leaveFleet, startInstanceRefresh } from './fleet/instance.js';

export interface RuntimeOptions {
  store: Store;
  /** A pino logger or anything with its three levels; silent when absent. */
  log?: ServiceLogger;
  /** The clock every command reads; the wall clock when absent. */
  clock?: () => Date;
  /**
   * Signs finalizations. Absent: the configured key (`BATON_SIGNING_KEY_FILE`,
   * or on LMDB one made once beside the data). `null`: no signer.
   */
  signer?: Signer | null;
  metrics?: Metrics;
  /** Wrap the store for fault injection (`--enable-fault-injection`). */
  faultInjection?: boolean;
}

export interface Runtime {
  readonly config: Config;
  readonly ctx: ServiceContext;
  /** The store as the service sees it (wrapped when faults may be injected). */
  readonly store: Store;
  /** Present only with fault injection. */
  readonly faults: FaultInjectingStore | undefined;
  readonly queue: WriteQueue | undefined;
  /** Starts the replayer and the sweepers; once. */
  start(): void;
  /** Runs a replay pass now (after a fault is cleared). */
  kickReplay(): Promise<void>;
  /**
   * At a stop: replays the queue until its journal is empty or `withinMs`
   * has passed, and stops the replayer; answers the writes left, which stay
   * in the journal for the next start. Call before {@link close}.
   */
  drainQueue(withinMs: number): Promise<number>;
  /** Stops the background work, finishing what is in progress, and closes the queue. */
  close(): Promise<void>;
}

const silent: ServiceLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The signer the configuration names; over FoundationDB instances share no disk, so signing there needs a configured key. */
export function configuredSigner(config: Pick<Config, 'signingKeyFile' | 'store' | 'dataDir'>): Signer | undefined {
  if (config.signingKeyFile) return loadSigner(config.signingKeyFile);
  return config.store === 'lmdb' ? loadOrCreateSigner(join(config.dataDir, 'signing-key.pem')) : undefined;
}

/** Commits landed after a refusal for want of room that show the data directory's disk has room again (`FullDisk`). */
const LMDB_LANDED_IN_A_ROW = 64;

/** The service context over `store` with the configuration's settings; no queue, nothing started. */
export function serviceContext(config: Config, options: Omit<RuntimeOptions, 'faultInjection'>): ServiceContext {
  const signer = options.signer === undefined ? configuredSigner(config) : (options.signer ?? undefined);
  const runsApart = runsApartStore(config, options.store);
  return {
    store: options.store,
    ...(runsApart !== undefined ? { runsApart } : {}),
    metrics: options.metrics ?? createMetrics(),
    log: options.log ?? silent,
    notifier: new EventNotifier(options.store, options.log),
    integrity: integrityRecorder,
    breaker: { attempts: config.recoveryMaxAttempts, windowMs: config.recoveryWindowMs },
    signer,
    maxCheckpointBytes: config.maxCheckpointBytes,
    transactionDeadlineMs: config.transactionDeadlineMs,
    clockSkewMs: config.clockSkewMs,
    pendingBound: config.indexerPendingBound,
    ...(options.store.name === 'lmdb' ? { dataDisk: new FullDisk(config.dataDir, LMDB_LANDED_IN_A_ROW) } : {}),
    ...(config.taskLanes === 'on' || (config.taskLanes === 'auto' && options.store.name === 'fdb') ? { lanes: new TaskLanes() } : {}),
    settingsSeed: settingsOf(config),
    ...(config.encryptionKeyFile !== undefined ? { vault: Vault.fromFile(config.encryptionKeyFile) } : {}),
    eventSource: '/baton',
    now: options.clock ?? (() => new Date()),
  };
}

export async function openRuntime(config: Config, options: RuntimeOptions): Promise<Runtime> {
  const faults = options.faultInjection ? new FaultInjectingStore(options.store) : undefined;
  const store: Store = faults ?? options.store;
  const base = serviceContext(config, { ...options, store });
  const stopLayout = await settleLayout(base);
  const noZstd = zstdMissing();
  if (noZstd !== undefined) base.log.warn({ reason: noZstd }, 'records are written with DEFLATE, not zstd, and a record another instance wrote with zstd cannot be read here: reinstall with a compiler at hand (npm ci builds zstd-napi)');
  await checkStoreKeys(base, config);
  await seedSettings(base);
  const queue = config.queueMaxBytes > 0 ? await openQueue(base, config) : undefined;
  const instance = instanceId(queue === undefined ? undefined : queueDirOf(config));
  if (base.dataDisk) base.metrics.watchDisk('data', base.dataDisk.directory);
  if (queue) base.metrics.watchDisk('queue', queue.dir);
  const ctx: ServiceContext = { ...base, instanceId: instance, duties: { instanceId: instance, ttlMs: config.dutyTtlMs }, ...(queue ? { queue } : {}) };
  // On the context before it starts: creates poke it, and it merges once started.
  const indexer = config.indexer === 'on' ? new Indexer(ctx, config.indexerDelayMs) : undefined;
  if (indexer !== undefined) ctx.indexer = indexer;
  // Over a store other processes write, every instance's creates wait on the fleet's count (merging or not).
  const gate = store.watch !== undefined ? new PendingGate(ctx, config.indexerPendingBound) : undefined;
  if (gate !== undefined) ctx.pendingGate = gate;
  await announce(ctx, instance);

  let stops: Array<() => Promise<void>> = [];
  let replayer: Replayer | undefined;
  let started = false;
  return {
    config,
    ctx,
    store,
    faults,
    queue,
    start() {
      if (started) return;
      started = true;
      replayer = queue ? startReplayer(ctx, queue, { intervalMs: config.queueReplayMs }) : undefined;
      const leases = startLeaseSweeper(ctx, config.leaseSweepMs);
      const operations = startOperationSweeper(ctx, { intervalMs: config.operationSweepMs });
      const maintenance = startMaintenance(ctx, { intervalMs: config.retentionSweepMs });
      const refresh = startInstanceRefresh(ctx, instance);
      indexer?.start();
      // Stopped in this order: the replayer finishes the write it is applying before the queue closes.
      stops = [() => replayer?.stop() ?? Promise.resolve(), () => indexer?.stop() ?? Promise.resolve(), async () => gate?.stop(), () => leases.stop(), () => operations.stop(), () => maintenance.stop(), () => refresh.stop()];
    },
    kickReplay: () => replayer?.kick() ?? Promise.resolve(),
    async drainQueue(withinMs) {
      if (queue === undefined || replayer === undefined || queue.depth === 0) return queue?.depth ?? 0;
      ctx.log.info({ depth: queue.depth, withinMs }, 'stopping with writes queued: replaying until the journal is empty or the grace period ends');
      const left = await replayer.drain(withinMs);
      if (left > 0) ctx.log.warn({ depth: left }, 'the shutdown grace period ended with writes queued; the journal keeps them for the next start');
      return left;
    },
    async close() {
      stopLayout();
      await stopRekey(ctx);
      for (const stop of stops) await stop();
      stops = [];
      await leaveFleet(ctx, instance).catch((error: unknown) => ctx.log.warn({ err: error }, 'the instance entry could not be updated at shutdown; it lapses on its own'));
      await queue?.close();
    },
  };
}

/** How often a store that was down at start-up is asked for its key layout again. */
const LAYOUT_RETRY_MS = 1_000;

/**
 * Reads the store's key layout (`repository/key-layout.ts`) before anything packs a
 * key. A store down at start-up (or whose disk has no room for the layout's
 * row) leaves it unknown: every transaction fails `unavailable` (queued
 * writes wait in the journal) until a retry every second reads it. Answers
 * how to stop the retries.
 */
async function settleLayout(ctx: ServiceContext): Promise<() => void> {
  try {
    await adoptKeyLayout((body) => runTransaction(ctx, body));
    return () => undefined;
  } catch (error) {
    if (!isOutage(error) && storeCause(error) !== 'no_space') throw error;
    forgetKeyLayout();
    ctx.log.warn({ err: error }, 'the store is unavailable at start-up; its key layout is read when it is back, and until then every request answers 503');
  }
  let stopped = false;
  const timer = setInterval(() => {
    adoptKeyLayout((body) => runTransaction(ctx, body)).then(
      (layout) => {
        if (stopped) return;
        clearInterval(timer);
        ctx.log.info({ layout }, 'the store answers: its key layout is read');
      },
      () => undefined,
    );
  }, LAYOUT_RETRY_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/** Stops the start when the store holds values sealed with a key the key file lacks; a store not reachable yet is checked by the queue alone. */
async function checkStoreKeys(ctx: ServiceContext, config: Config): Promise<void> {
  try {
    await checkKeys(ctx, config.encryptionKeyFile);
  } catch (error) {
    if (!isOutage(error)) throw error;
    ctx.log.warn({ err: error }, 'the store is unavailable at start-up; its encryption keys are checked when it is back');
  }
}

/** Writes this instance's settings that remove data to a store that holds none; says which configured values the store's override. */
async function seedSettings(ctx: ServiceContext): Promise<void> {
  try {
    const { overridden } = await adoptSettings(ctx);
    if (overridden.length > 0) ctx.log.warn({ overridden }, 'the store holds the fleet settings that remove data; these configured values are not used (change them with PUT /v1/admin/settings)');
  } catch (error) {
    if (!isOutage(error)) throw error;
    ctx.log.warn({ err: error }, 'the store is unavailable at start-up; its fleet settings are read when it is back');
  }
}

function queueDirOf(config: Config): string {
  return config.queueDir ?? join(config.dataDir, 'queue');
}

/** This instance among the store's instances, with the keys it seals with and its queue needs; a store not reachable yet hears at the next refresh. */
async function announce(ctx: ServiceContext, id: string): Promise<void> {
  try {
    await announceInstance(ctx, id);
  } catch (error) {
    if (!isOutage(error)) throw error;
  }
}

/** The write queue, its records sealed with their tenant's key when a key file is set. */
async function openQueue(ctx: ServiceContext, config: Config): Promise<WriteQueue> {
  const { vault } = ctx;
  const cipher = {
    seal: (record: unknown, payload: Buffer) => (vault ? vault.sealRecord((record as { command: { actor: { tenant: string } } }).command.actor.tenant, payload) : payload),
    open: (payload: Buffer) => (vault ? vault.openRecord(payload) : openPlain(payload)),
  };
  try {
    return (await WriteQueue.open({ dir: queueDirOf(config), maxBytes: config.queueMaxBytes, journal: { cipher } })).queue;
  } catch (error) {
    if (!(error instanceof MissingKeyError)) throw error;
    throw missingKey('The write queue holds writes', error.keyId, config.encryptionKeyFile);
  }
}
