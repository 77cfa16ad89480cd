/**
 * /console: the web page for auditors and operators (docs/console.md). The
 * page is static and needs no token; everything it shows it reads from the
 * public API with the token its user types in. `/console` and every path
 * below it (`/console/tasks/:taskId`, `/console/checkpoints/:id`, …) answer
 * the same `index.html`, which routes in the browser; the script and styles
 * are under `/console/assets/`.
 *
 * @module
 */
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { sharedConsoleBundle } from '../console-bundle.js';

export const CONSOLE_PREFIX = '/console';

/**
 * The page runs only its own script and talks only to this origin: a token
 * kept in session storage is then out of reach of injected markup, and the
 * page cannot be framed.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

function secure(reply: FastifyReply): FastifyReply {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
  // Revalidated on every load, so a restarted server's new bundle is used at once.
  return reply.header('cache-control', 'no-cache');
}

export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const dir = await sharedConsoleBundle(app.log);
  if (dir === undefined) return;

  await app.register(fastifyStatic, {
    root: `${dir}/assets`,
    prefix: `${CONSOLE_PREFIX}/assets/`,
    index: false,
    list: false,
    cacheControl: false,
    setHeaders: (reply) => secure(reply),
  });

  const page = async (_request: unknown, reply: FastifyReply) => secure(reply).sendFile('index.html', dir);
  app.get(CONSOLE_PREFIX, { schema: { hide: true } }, page);
  // Deep links are routed by the page itself.
  app.get(`${CONSOLE_PREFIX}/*`, { schema: { hide: true } }, page);
}
