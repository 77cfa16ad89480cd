/**
 * Builds the HTTP application over an open store. Never listens: `main.ts`
 * does, and tests build an app per test.
 *
 * @module
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { Store } from './store/store.js';

export interface AppOptions {
  config: Config;
  store: Store;
  /** A pino logger; without one the app logs nothing. */
  logger?: FastifyBaseLogger;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify(options.logger ? { loggerInstance: options.logger } : { logger: false });

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    try {
      await options.store.ping();
      return { status: 'ready', store: { name: options.store.name, status: 'ok' } };
    } catch {
      return reply.code(503).send({ status: 'unavailable', store: { name: options.store.name, status: 'unavailable' } });
    }
  });

  return app;
}
