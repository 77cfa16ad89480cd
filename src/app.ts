/**
 * Builds the HTTP application over a service runtime. Never listens:
 * `main.ts` does, and tests build an app per test.
 *
 * @module
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { fastifyOptions, registerPlugins } from './http/plugins/index.js';
import { requestAlone } from './http/plugins/in-flight.js';
import { httpsOptions } from './http/tls.js';
import { adminRoutes } from './http/routes/admin.js';
import { checkpointRoutes } from './http/routes/checkpoints.js';
import { consoleRoutes } from './http/routes/console.js';
import { eventRoutes } from './http/routes/events.js';
import { formatRoutes } from './http/routes/formats.js';
import { handoffRoutes } from './http/routes/handoffs.js';
import { healthRoutes } from './http/routes/health.js';
import { keyRoutes } from './http/routes/keys.js';
import { leaseRoutes } from './http/routes/leases.js';
import { mcpRoutes } from './http/routes/mcp.js';
import { recoveryRoutes } from './http/routes/recoveries.js';
import { resumeRoutes } from './http/routes/resume.js';
import { retentionRoutes } from './http/routes/retention.js';
import { taskRoutes } from './http/routes/tasks.js';
import { openRuntime, type Runtime, type RuntimeOptions } from './service/runtime.js';

interface HttpOptions {
  /** A pino logger; without one the app logs nothing. */
  logger?: FastifyBaseLogger;
  /** How often live event streams poll the store besides being woken (ms). */
  eventPollMs?: number;
}

/**
 * Either a runtime the caller opened, started and closes (`main.ts`), or the
 * parts of one: the app then opens its own runtime, starts it, and closes it
 * with the app (tests). `now` is the runtime's clock.
 */
export type AppOptions = HttpOptions & ({ runtime: Runtime } | ({ config: Config; now?: () => Date } & Omit<RuntimeOptions, 'log' | 'clock'>));

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  // A TLS setting that cannot work stops the build before a runtime (and the directories it holds) is opened.
  const https = httpsOptions('runtime' in options ? options.runtime.config : options.config);
  let runtime: Runtime;
  let owned = false;
  if ('runtime' in options) {
    runtime = options.runtime;
  } else {
    const { config, now, logger, eventPollMs: _eventPollMs, ...parts } = options;
    // A test app signs only when given a signer, as it always has.
    runtime = await openRuntime(config, { signer: null, ...parts, ...(logger ? { log: logger } : {}), ...(now ? { clock: now } : {}) });
    owned = true;
  }
  const { config, ctx } = runtime;
  const app = Fastify({ ...fastifyOptions(config), ...(https ? { https } : {}), ...(options.logger ? { loggerInstance: options.logger } : { logger: false }) });
  await registerPlugins(app, { config, metrics: ctx.metrics });
  // A lone request's commit runs on the event loop (`Store.commitInline`): no one else waits meanwhile.
  runtime.store.commitInline?.(requestAlone);

  await app.register(healthRoutes, { store: runtime.store, queue: runtime.queue, dataDisk: ctx.dataDisk, now: ctx.now });
  if (owned) {
    runtime.start();
    // Graceful close finishes the write being replayed, then closes the journal.
    app.addHook('onClose', () => runtime.close());
  }

  await app.register(checkpointRoutes, { ctx });
  await app.register(taskRoutes, { ctx, writerPurge: config.writerPurge === '1', purgeWaitMs: config.purgeWaitMs });
  await app.register(retentionRoutes, { ctx });
  await app.register(handoffRoutes, { ctx });
  await app.register(leaseRoutes, { ctx });
  await app.register(recoveryRoutes, { ctx });
  await app.register(resumeRoutes, { ctx });
  await app.register(formatRoutes, { ctx });
  await app.register(eventRoutes, { ctx, ...(options.eventPollMs ? { pollMs: options.eventPollMs } : {}) });
  await app.register(keyRoutes, { ctx });
  await app.register(mcpRoutes, { ctx });
  await app.register(adminRoutes, { ctx, faults: runtime.faults, onFaultsCleared: () => void runtime.kickReplay() });
  await app.register(consoleRoutes);
  return app;
}
