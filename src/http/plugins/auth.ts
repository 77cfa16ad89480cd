/**
 * Bearer-token authentication, role checks and per-token rate limits
 * (DESIGN §6). Tokens come from `BATON_TOKENS` and `BATON_TOKENS_FILE`; only
 * their SHA-256 digests are kept, and a token is identified in logs by the
 * first 12 hex digits of its digest. `docs/auth.md` is the user's guide.
 *
 * @module
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ConfigError, type Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { jwtVerifier, looksLikeJwt } from './jwt.js';

export type Role = 'writer' | 'auditor' | 'admin';
export const ROLES: readonly Role[] = ['writer', 'auditor', 'admin'];
export const DEFAULT_TENANT = 'default';

/** Who sent a request. `subject` names the token without revealing it, so it is safe to log. */
export interface Principal {
  role: Role;
  tenant: string;
  subject: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every route that needs a token; public routes (and unmatched ones) leave it unset. */
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** Roles allowed on the route; admin is always allowed. Default: everyone for GET/HEAD, writer otherwise. */
    roles?: readonly Role[];
  }
}

/** Pass to the pino logger's `redact` option: no token or cookie ever reaches a log line. */
export const LOG_REDACT_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie'];

const ANONYMOUS_ADMIN: Principal = Object.freeze({ role: 'admin', tenant: DEFAULT_TENANT, subject: 'anonymous' });
const READ_METHODS = new Set(['GET', 'HEAD']);
const READ_ROLES: readonly Role[] = ['writer', 'auditor', 'admin'];
const WRITE_ROLES: readonly Role[] = ['writer', 'admin'];
const METRICS_ROUTE = '/metrics';
const PUBLIC_ROUTES = new Set(['/livez', '/healthz', '/readyz', '/openapi.json', '/docs']);
/** Tenants become key prefixes and log fields, so they keep to a plain alphabet. */
const TENANT_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
/** Shorter tokens can be guessed; they still work, but the operator is warned. */
const MIN_TOKEN_LENGTH = 16;

const EMPTY = Buffer.alloc(0);

interface TokenEntry {
  digest: Buffer;
  principal: Principal;
}

function sha256(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/** Whether a route (by its pattern, e.g. `/docs/static/*`) answers without a token. */
export function isPublicRoute(method: string, route: string): boolean {
  // The console's page and assets are static; the API calls it makes carry the user's token.
  return READ_METHODS.has(method) && (PUBLIC_ROUTES.has(route) || route.startsWith('/docs/') || route === '/console' || route.startsWith('/console/'));
}

function tokenEntry(fields: string[], digest: (secret: string) => Buffer | undefined, where: string): TokenEntry {
  const [role, secret, tenant = DEFAULT_TENANT, ...rest] = fields;
  const bytes = secret === undefined ? undefined : digest(secret);
  if (!ROLES.includes(role as Role) || bytes === undefined || rest.length > 0 || !TENANT_PATTERN.test(tenant)) {
    throw new ConfigError(
      `${where} is not role:token[:tenant], with role writer, auditor or admin and a tenant of letters, digits, ".", "_" or "-".`,
    );
  }
  // Shared by every request of this token, so no handler may change it.
  const principal = Object.freeze({ role: role as Role, tenant, subject: bytes.toString('hex').slice(0, 12) });
  return { digest: bytes, principal };
}

/** Parses `BATON_TOKENS`: `role:token[:tenant]` entries, comma-separated. */
export function parseTokens(spec: string): TokenEntry[] {
  return spec
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map((item, index) => tokenEntry(item.split(':'), (secret) => (secret === '' ? undefined : sha256(secret)), `BATON_TOKENS entry ${index + 1}`));
}

/** Parses a `BATON_TOKENS_FILE`: `role:sha256hex[:tenant]` lines; blank lines and `#` comments are skipped. */
export function parseTokensFile(text: string): TokenEntry[] {
  return text
    .split(/\r?\n/)
    .map((line, index) => ({ line: line.trim(), number: index + 1 }))
    .filter(({ line }) => line !== '' && !line.startsWith('#'))
    .map(({ line, number }) =>
      tokenEntry(line.split(':'), (hex) => (SHA256_HEX.test(hex.toLowerCase()) ? Buffer.from(hex, 'hex') : undefined), `BATON_TOKENS_FILE line ${number}`),
    );
}

function hasShortToken(spec: string): boolean {
  const secrets = spec.split(',').filter((item) => item.trim() !== '').map((item) => item.trim().split(':')[1] ?? '');
  return secrets.some((secret) => secret.length < MIN_TOKEN_LENGTH);
}

async function loadTokens(config: Config): Promise<TokenEntry[]> {
  const entries = parseTokens(config.tokens);
  if (config.tokensFile !== undefined) {
    let text: string;
    try {
      text = await readFile(config.tokensFile, 'utf8');
    } catch (error) {
      throw new ConfigError('BATON_TOKENS_FILE cannot be read; check that the file exists and the service may read it.', { cause: error });
    }
    entries.push(...parseTokensFile(text));
  }
  const digests = new Set(entries.map((entry) => entry.digest.toString('hex')));
  if (digests.size !== entries.length) {
    throw new ConfigError('A token appears more than once in BATON_TOKENS or BATON_TOKENS_FILE; give each role and tenant its own token.');
  }
  return entries;
}

let developmentToken: string | undefined;

/** The sentence printed when no token is configured: it carries the token, so it goes to stderr, never to the log. */
export function devTokenNotice(token: string, config: Pick<Config, 'host' | 'port'>): string {
  return [
    '',
    'Baton: no tokens are configured (BATON_TOKENS, BATON_TOKENS_FILE), so this process made one admin token:',
    '',
    `    ${token}`,
    '',
    `Try it:  curl -H "Authorization: Bearer ${token}" http://${config.host}:${config.port}/v1/checkpoints`,
    `or open http://${config.host}:${config.port}/console and paste it into the Token field.`,
    'It changes at every start. For real tokens, start with e.g.',
    '    BATON_TOKENS="writer:<secret>,auditor:<secret>,admin:<secret>"',
    'or a BATON_TOKENS_FILE of role:sha256hex[:tenant] lines; see docs/auth.md.',
    '',
  ].join('\n');
}

/** One token per process, however many apps it builds, printed once. */
function developmentTokenEntry(config: Config): TokenEntry {
  if (developmentToken === undefined) {
    developmentToken = randomBytes(24).toString('base64url');
    process.stderr.write(devTokenNotice(developmentToken, config));
  }
  return tokenEntry(['admin', developmentToken], sha256, 'the development token');
}

function bearerToken(request: FastifyRequest): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
  return match?.[1];
}

/** Compares against every entry, so the time taken does not tell which entry matched. */
function findToken(entries: readonly TokenEntry[], token: string): TokenEntry | undefined {
  const digest = sha256(token);
  let found: TokenEntry | undefined;
  for (const entry of entries) {
    if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry;
  }
  return found;
}

function unauthorized(reply: FastifyReply, presented: boolean): AppError {
  reply.header('www-authenticate', presented ? 'Bearer realm="baton", error="invalid_token"' : 'Bearer realm="baton"');
  return new AppError('unauthorized');
}

function mayCall(request: FastifyRequest, role: Role): boolean {
  const allowed = request.routeOptions.config.roles ?? (READ_METHODS.has(request.method) ? READ_ROLES : WRITE_ROLES);
  return role === 'admin' || allowed.includes(role);
}

async function auth(app: FastifyInstance, opts: { config: Config }): Promise<void> {
  const { config } = opts;
  app.decorateRequest('principal');

  app.addHook('onRoute', (route) => {
    const roles = route.config?.roles;
    if (roles !== undefined && !roles.every((role) => ROLES.includes(role))) {
      throw new TypeError('A route names a role other than writer, auditor or admin in config.roles.');
    }
  });

  if (config.auth === 'disabled') {
    app.log.warn('authentication is disabled: every request is admin; never do this outside local development');
    app.addHook('onRequest', async (request) => {
      request.principal = ANONYMOUS_ADMIN;
    });
  } else {
    const configured = await loadTokens(config);
    const jwt = jwtVerifier(config);
    const nothingConfigured = config.tokens.trim() === '' && config.tokensFile === undefined && jwt === undefined;
    const entries = nothingConfigured ? [developmentTokenEntry(config)] : configured;
    if (entries.length === 0) app.log.warn('no tokens are configured: every request that needs a token is refused');
    if (hasShortToken(config.tokens)) {
      app.log.warn({ minLength: MIN_TOKEN_LENGTH }, 'a token in BATON_TOKENS is short enough to guess; use long random tokens');
    }
    const metricsDigest = config.metricsToken === undefined ? undefined : sha256(config.metricsToken);

    app.addHook('onRequest', async (request, reply) => {
      const route = request.routeOptions.url;
      // Unmatched requests reach only the not-found handler, which reveals nothing a token would protect.
      if (request.is404 || route === undefined || isPublicRoute(request.method, route)) return;
      const token = bearerToken(request);
      let entry = token === undefined ? undefined : findToken(entries, token);
      // A static token is looked up first, at no cost to it; only a JWT-shaped value that is not one is verified.
      if (entry === undefined && token !== undefined && jwt !== undefined && looksLikeJwt(token)) {
        try {
          entry = { digest: EMPTY, principal: await jwt(token) };
        } catch (error) {
          reply.header('www-authenticate', 'Bearer realm="baton", error="invalid_token"');
          throw error;
        }
      }
      if (route === METRICS_ROUTE && READ_METHODS.has(request.method)) {
        if (metricsDigest === undefined || (token !== undefined && timingSafeEqual(sha256(token), metricsDigest))) return;
        if (entry === undefined) throw unauthorized(reply, token !== undefined);
        if (entry.principal.role !== 'admin') throw new AppError('forbidden');
        return;
      }
      if (entry === undefined) throw unauthorized(reply, token !== undefined);
      request.principal = entry.principal;
      if (!mayCall(request, entry.principal.role)) throw new AppError('forbidden');
    });
  }

  await app.register(rateLimit, {
    max: config.rateLimitPerMinute,
    timeWindow: 60_000,
    hook: 'onRequest',
    // Public routes, /metrics and refused requests carry no principal: nothing to count them against.
    allowList: (request) => {
      const route = request.routeOptions.url;
      return route === undefined || route === METRICS_ROUTE || isPublicRoute(request.method, route) || request.principal === undefined;
    },
    keyGenerator: (request) => (request.principal as Principal | undefined)?.subject ?? request.ip,
    errorResponseBuilder: () => new AppError('rate_limited'),
  });
}

export const authPlugin = fp(auth, { name: 'baton-auth', fastify: '5.x' });
