/**
 * HTTP request metrics, and `GET /metrics` in the Prometheus text format.
 * Requests are labelled by route pattern, never by raw URL, so ids in paths
 * cannot explode the number of series.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../../metrics.js';

/** The label of requests that matched no route. */
export const UNMATCHED_ROUTE = 'unmatched';

async function metricsPlugin(app: FastifyInstance, opts: { metrics: Metrics }): Promise<void> {
  const { metrics } = opts;

  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      status: String(reply.statusCode),
    };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime);
  });

  app.get('/metrics', async (_request, reply) => {
    const body = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(body);
  });
}

export const httpMetricsPlugin = fp(metricsPlugin, { name: 'baton-metrics', fastify: '5.x' });
