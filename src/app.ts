/**
 * Builds the HTTP application over an open store. Never listens: `main.ts`
 * does, and tests build an app per test.
 *
 * @module
 */
import { join } from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { fastifyOptions, registerPlugins } from './http/plugins/index.js';
import { adminRoutes } from './http/routes/admin.js';
import { checkpointRoutes } from './http/routes/checkpoints.js';
import { consoleRoutes } from './http/routes/console.js';
import { eventRoutes } from './http/routes/events.js';
import { formatRoutes } from './http/routes/formats.js';
import { handoffRoutes } from './http/routes/handoffs.js';
import { healthRoutes } from './http/routes/health.js';
import { keyRoutes } from './http/routes/keys.js';
import { leaseRoutes } from './http/routes/leases.js';
import { recoveryRoutes } from './http/routes/recoveries.js';
import { resumeRoutes } from './http/routes/resume.js';
import { taskRoutes } from './http/routes/tasks.js';
import { createMetrics, type Metrics } from './metrics.js';
import { startReplayer } from './queue/replayer.js';
import { WriteQueue } from './queue/write-queue.js';
import type { ServiceContext, ServiceLogger } from './service/context.js';
import { EventNotifier } from './service/events.js';
import { integrityRecorder } from './service/integrity.js';
import { startLeaseSweeper } from './service/leases.js';
import { startOperationSweeper } from './service/operation-sweeper.js';
import type { Signer } from './service/signing.js';
import { FaultInjectingStore } from './store/faults.js';
import type { Store } from './store/store.js';

export interface AppOptions {
  config: Config;
  store: Store;
  /** A pino logger; without one the app logs nothing. */
  logger?: FastifyBaseLogger;
  signer?: Signer;
  metrics?: Metrics;
  /** How often live event streams poll the store besides being woken (ms). */
  eventPollMs?: number;
  now?: () => Date;
  /** Wrap the store for fault injection (`--enable-fault-injection`) and expose `/v1/admin/faults`. */
  faultInjection?: boolean;
}

const silent: ServiceLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const faults = options.faultInjection ? new FaultInjectingStore(options.store) : undefined;
  const store: Store = faults ?? options.store;
  const now = options.now ?? (() => new Date());
  const queue = config.queueMaxBytes > 0 ? (await WriteQueue.open({ dir: config.queueDir ?? join(config.dataDir, 'queue'), maxBytes: config.queueMaxBytes })).queue : undefined;
  const app = Fastify({ ...fastifyOptions(config), ...(options.logger ? { loggerInstance: options.logger } : { logger: false }) });
  const metrics = options.metrics ?? createMetrics();
  await registerPlugins(app, { config, metrics });

  const ctx: ServiceContext = {
    store,
    metrics,
    log: options.logger ?? silent,
    notifier: new EventNotifier(),
    integrity: integrityRecorder,
    breaker: { attempts: config.recoveryMaxAttempts, windowMs: config.recoveryWindowMs },
    signer: options.signer,
    maxCheckpointBytes: config.maxCheckpointBytes,
    eventSource: '/baton',
    now,
    ...(queue ? { queue } : {}),
  };

  await app.register(healthRoutes, { store, queue, now });
  const replayer = queue ? startReplayer(ctx, queue, config.queueReplayMs) : undefined;
  // Graceful close finishes the write being replayed, then closes the journal.
  app.addHook('onClose', async () => {
    await replayer?.stop();
    await queue?.close();
  });

  const sweeper = startLeaseSweeper(ctx, config.leaseSweepMs);
  app.addHook('onClose', () => sweeper.stop());
  const operationSweeper = startOperationSweeper(ctx, { retentionMs: config.operationRetentionMs, intervalMs: config.operationSweepMs });
  app.addHook('onClose', () => operationSweeper.stop());

  await app.register(checkpointRoutes, { ctx });
  await app.register(taskRoutes, { ctx, writerPurge: config.writerPurge === '1' });
  await app.register(handoffRoutes, { ctx });
  await app.register(leaseRoutes, { ctx });
  await app.register(recoveryRoutes, { ctx });
  await app.register(resumeRoutes, { ctx });
  await app.register(formatRoutes, { ctx });
  await app.register(eventRoutes, { ctx, ...(options.eventPollMs ? { pollMs: options.eventPollMs } : {}) });
  await app.register(keyRoutes, { signer: options.signer });
  await app.register(adminRoutes, { ctx, faults, onFaultsCleared: () => void replayer?.kick() });
  await app.register(consoleRoutes);
  return app;
}
