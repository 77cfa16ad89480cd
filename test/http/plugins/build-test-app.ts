/**
 * A small app for the plugin tests: the real plugins, then throwaway routes
 * that exercise them (validation, each kind of error, roles).
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { configSchema, type Config } from '../../../src/config.js';
import { AppError } from '../../../src/errors.js';
import { fastifyOptions, registerPlugins } from '../../../src/http/plugins/index.js';
import { createMetrics, type Metrics } from '../../../src/metrics.js';
import { runTransaction } from '../../../src/service/transactions.js';
import { FaultInjectingStore } from '../../../src/store/faults.js';
import { LmdbStore } from '../../../src/store/lmdb.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS } from '../../support/app.js';

export { TOKENS };

export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return configSchema.parse({
    tokens: `writer:${TOKENS.writer},auditor:${TOKENS.auditor},admin:${TOKENS.admin},writer:${TOKENS.acmeWriter}:acme`,
    logLevel: 'silent',
    ...overrides,
  });
}

export const checkpointBody = z.object({
  taskId: z.string().min(1),
  iteration: z.number().int().nonnegative(),
  executionState: z.object({
    phase: z.enum(['planning', 'implementing', 'testing', 'reviewing', 'complete', 'handoff']),
    currentFocus: z.string(),
  }),
});

/** A real LMDB store that fails as an unreachable store does, for the store-error route. */
async function unreachableStore(app: FastifyInstance): Promise<FaultInjectingStore> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-plugins-'));
  const inner = LmdbStore.open({ path: dir });
  app.addHook('onClose', async () => {
    await inner.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = new FaultInjectingStore(inner);
  store.setFaults({ store: 'unavailable', latencyMs: 0 });
  return store;
}

function addTestRoutes(app: FastifyInstance, metrics: Metrics, store: FaultInjectingStore): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.get('/healthz', async () => ({ status: 'ok' }));
  routes.post('/test/checkpoints', { schema: { body: checkpointBody } }, async (request, reply) =>
    reply.code(201).send({ taskId: request.body.taskId, principal: request.principal }),
  );
  routes.patch('/test/checkpoints/:id', { schema: { params: z.object({ id: z.uuid() }), body: z.object({ labels: z.record(z.string(), z.string()) }) } }, async (request) => ({
    id: request.params.id,
    labels: request.body.labels,
  }));
  routes.get('/test/items', { schema: { querystring: z.object({ limit: z.coerce.number().int().max(1000) }) } }, async (request) => ({ limit: request.query.limit }));
  routes.get('/test/whoami', async (request) => request.principal);
  routes.post('/test/admin-only', { config: { roles: ['admin'] } }, async () => ({ ok: true }));
  routes.get('/test/app-error', async () => {
    throw new AppError('checkpoint_finalized', { detail: 'It was finalized at 2025-01-01T00:00:00Z.', extra: { checkpointId: 'c-1', status: 999 } });
  });
  routes.get('/test/plain-error', async () => {
    throw new Error('password=hunter2 leaked from the database driver');
  });
  routes.get('/test/store-error', async () => runTransaction({ store, metrics, transactionDeadlineMs: 1_000 }, async (tx) => tx.get(Buffer.from('k'))));
}

export interface TestApp {
  app: FastifyInstance;
  metrics: Metrics;
  config: Config;
}

/** Builds the app as `app.ts` will: constructor options, plugins, then routes. */
export async function buildTestApp(overrides: Partial<Config> = {}, loggerInstance?: FastifyBaseLogger): Promise<TestApp> {
  const config = testConfig(overrides);
  const metrics = createMetrics();
  const app = Fastify({ ...fastifyOptions(config), ...(loggerInstance ? { loggerInstance } : { logger: false }) });
  await registerPlugins(app, { config, metrics });
  addTestRoutes(app, metrics, await unreachableStore(app));
  await app.ready();
  return { app, metrics, config };
}
