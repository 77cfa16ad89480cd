/**
 * Everything the routes rely on, installed in one call before any route is
 * registered: zod validation and serialization, the merge-patch body type,
 * request ids, RFC 9457 errors, draining unread bodies before an early
 * answer, 406 for reads whose Accept the answer does not meet,
 * authentication, metrics and the OpenAPI
 * document. Fastify applies hooks and route options only to routes added
 * after them, hence the order and the "before routes" rule.
 *
 * @module
 */
import { EXTERNAL_ID_MAX } from '../../domain/checkpoint.js';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Config } from '../../config.js';
import { compiledCheck } from '../compiled-validation.js';
import type { Metrics } from '../../metrics.js';
import { acceptPlugin } from './accept.js';
import { authPlugin } from './auth.js';
import { bodyDrainPlugin, drainLimits } from './body-drain.js';
import { clientErrorHandler } from './client-errors.js';
import { errorsPlugin, frameworkErrors } from './errors.js';
import { httpMetricsPlugin } from './metrics.js';
import { requestsInFlightPlugin } from './in-flight.js';
import { openapiPlugin } from './openapi.js';
import { registerJsonBody } from './json-body.js';
import { genReqId, requestIdPlugin } from './request-id.js';
import { RequestLogController } from './request-log.js';
import { requestLogger, tracingPlugin } from './tracing.js';

export const MERGE_PATCH_CONTENT_TYPE = 'application/merge-patch+json';

/**
 * The Fastify constructor options these plugins depend on; spread them into
 * `Fastify({ ...fastifyOptions(config), loggerInstance })`.
 */
export function fastifyOptions(config: Config) {
  return {
    // Room for whitespace: the exact limit applies to the canonical checkpoint, and answers 413 too.
    bodyLimit: config.maxCheckpointBytes * 2,
    genReqId,
    // One child logger a request, naming its trace when tracing is on.
    childLoggerFactory: requestLogger,
    // Fastify's two lines a request at debug: at info a read logs nothing, a write the service's line (`request-log.ts`).
    logController: new RequestLogController(),
    frameworkErrors,
    clientErrorHandler,
    // A request that reaches a keep-alive connection while the server drains is served like the others
    // (the store stays open until the drain ends), not refused with Fastify's own non-problem 503.
    return503OnClosing: false,
    // A task id may be 200 characters, each up to 9 once percent-encoded: the router must take it whole in a path.
    routerOptions: { maxParamLength: EXTERNAL_ID_MAX * 9 },
  } satisfies FastifyServerOptions;
}

export async function registerPlugins(app: FastifyInstance, opts: { config: Config; metrics: Metrics }): Promise<void> {
  // The hot routes' bodies pass a compiled check first (`compiled-validation.ts`); what it refuses, zod judges and explains.
  app.setValidatorCompiler((route) => {
    const judged = validatorCompiler(route as Parameters<typeof validatorCompiler>[0]);
    const check = compiledCheck(route.schema);
    return check === undefined ? judged : (data) => (check(data) ? { value: data } : judged(data));
  });
  app.setSerializerCompiler(serializerCompiler);
  // Bodies are JSON; a route that takes text (e.g. an import) adds its own parser in its own scope.
  app.removeContentTypeParser('text/plain');
  // A merge patch is a JSON document (RFC 7396): one parser for both, with the same checks and body limit.
  registerJsonBody(app);
  await app.register(requestsInFlightPlugin);
  await app.register(requestIdPlugin);
  await app.register(tracingPlugin);
  await app.register(errorsPlugin);
  await app.register(bodyDrainPlugin, { limits: drainLimits(fastifyOptions(opts.config).bodyLimit) });
  await app.register(acceptPlugin);
  await app.register(authPlugin, { config: opts.config });
  await app.register(httpMetricsPlugin, { metrics: opts.metrics });
  await app.register(openapiPlugin);
}
