// Loaded with --import before the client: any module the server alone needs
// (its framework, store, metrics, logger, service or plugins) fails to
// resolve, so a client that reached for one could not load.
import { register } from 'node:module';

const hooks = `
const forbidden = [
  /\\/node_modules\\/(fastify|@fastify\\/[^/]+|fastify-[^/]+|lmdb|prom-client|pino|foundationdb)\\//,
  /\\/src\\/(service|store|http\\/plugins|http\\/routes)\\//,
  /\\/src\\/(app|main|metrics|config|errors)\\.ts$/,
];
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (forbidden.some((pattern) => pattern.test(resolved.url))) throw new Error('A server module was loaded: ' + resolved.url);
  return resolved;
}
`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
