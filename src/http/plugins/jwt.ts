/**
 * JSON Web Tokens beside the static tokens (DESIGN §6): a bearer value that is
 * a JWT is verified with `jose` against the keys of `BATON_JWKS_URL` (fetched
 * once and cached; a token signed by a key the set does not hold yet makes it
 * fetch the set again, at most once per `BATON_JWKS_COOLDOWN_MS`, so a key
 * rotation is followed), and must carry `BATON_JWT_ISSUER` and
 * `BATON_JWT_AUDIENCE` when they are set. The claim `baton_role` (writer,
 * auditor or admin) gives the role, `baton_tenant` the tenant (default
 * `default`), `sub` the subject. Every failure is 401 with a detail that says
 * which check failed and nothing of the token.
 *
 * @module
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';

export interface JwtPrincipal {
  role: 'writer' | 'auditor' | 'admin';
  tenant: string;
  subject: string;
}

export type JwtVerifier = (token: string) => Promise<JwtPrincipal>;

const ROLES = new Set(['writer', 'auditor', 'admin']);
const TENANT_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** Three base64url parts: a compact JWS. A static token never has dots. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
/** Signatures that carry a key: `none` and symmetric ones (a shared secret is not a JWKS) are refused. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export function looksLikeJwt(token: string): boolean {
  return COMPACT_JWS.test(token);
}

function refused(detail: string): AppError {
  return new AppError('unauthorized', { detail });
}

/** Why jose refused a token, as a sentence that names the check and nothing of the token. */
function why(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'The token has expired (exp).';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'The token is not valid yet (nbf).';
    if (error.claim === 'iat') return 'The token was issued in the future (iat).';
    if (error.claim === 'iss') return 'The token was issued by another issuer than BATON_JWT_ISSUER names.';
    if (error.claim === 'aud') return 'The token is for another audience than BATON_JWT_AUDIENCE names.';
    return `The token's ${error.claim} claim is not valid.`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) return 'The token was signed by a key the JWKS does not hold.';
  if (error instanceof errors.JWKSMultipleMatchingKeys) return 'The token names no key id (kid) and the JWKS holds several keys.';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'The token’s signature does not verify.';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'The token’s signature algorithm is not accepted (alg).';
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return 'The signing keys (BATON_JWKS_URL) could not be fetched; try again.';
  return 'The token is not a valid JWT.';
}

function principalOf(payload: JWTPayload): JwtPrincipal {
  const role = payload.baton_role;
  if (typeof role !== 'string' || !ROLES.has(role)) throw refused('The token has no baton_role claim of writer, auditor or admin.');
  const tenant = payload.baton_tenant ?? 'default';
  if (typeof tenant !== 'string' || !TENANT_PATTERN.test(tenant)) throw refused('The token’s baton_tenant claim is not a tenant name (letters, digits, ".", "_" or "-").');
  const sub = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub.slice(0, 128) : 'unknown';
  return { role: role as JwtPrincipal['role'], tenant, subject: `jwt:${sub}` };
}

/** The verifier of the configured JWKS, or undefined when JWTs are not configured. */
export function jwtVerifier(config: Pick<Config, 'jwksUrl' | 'jwtIssuer' | 'jwtAudience' | 'jwksCooldownMs'>): JwtVerifier | undefined {
  if (config.jwksUrl === undefined) return undefined;
  const keys = createRemoteJWKSet(new URL(config.jwksUrl), { cooldownDuration: config.jwksCooldownMs, timeoutDuration: 5_000 });
  const options = {
    algorithms: ALGORITHMS,
    ...(config.jwtIssuer !== undefined ? { issuer: config.jwtIssuer } : {}),
    ...(config.jwtAudience !== undefined ? { audience: config.jwtAudience } : {}),
  };
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, options));
    } catch (error) {
      throw refused(why(error));
    }
    return principalOf(payload);
  };
}
