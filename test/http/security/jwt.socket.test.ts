/**
 * JWTs beside static tokens, verified against a JWKS that this test serves on
 * a real socket (and rotates), with keys and tokens made by `jose`. Every
 * failing check is a 401 problem whose detail names the check.
 */
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../../support/app.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'baton';

interface Key {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function key(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

let published: Key[] = [];
let jwks: Server;
let jwksUrl: string;
let fetches = 0;
let t: TestApp;
let first: Key;
let stranger: Key;

beforeAll(async () => {
  first = await key('key-1');
  stranger = await key('not-published');
  published = [first];
  jwks = createServer((_req, res) => {
    fetches += 1;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: published.map((k) => k.jwk) }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  const address = jwks.address();
  jwksUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/.well-known/jwks.json`;
  t = await buildTestApp({ config: { jwksUrl, jwtIssuer: ISSUER, jwtAudience: AUDIENCE, jwksCooldownMs: 0 } });
});
afterAll(async () => {
  await t.close();
  await new Promise((resolve) => jwks.close(resolve));
});

interface Claims {
  role?: string;
  tenant?: string;
  issuer?: string;
  audience?: string;
  exp?: number | string;
  nbf?: number | string;
  sub?: string;
}

function token(signer: Key, claims: Claims = {}): Promise<string> {
  const body: Record<string, unknown> = {};
  if (claims.role !== '') body.baton_role = claims.role ?? 'writer';
  if (claims.tenant !== undefined) body.baton_tenant = claims.tenant;
  const jwt = new SignJWT(body)
    .setProtectedHeader({ alg: 'ES256', kid: signer.kid })
    .setIssuer(claims.issuer ?? ISSUER)
    .setAudience(claims.audience ?? AUDIENCE)
    .setSubject(claims.sub ?? 'agent-7')
    .setIssuedAt()
    .setExpirationTime(claims.exp ?? '5m');
  if (claims.nbf !== undefined) jwt.setNotBefore(claims.nbf);
  return jwt.sign(signer.privateKey);
}

const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

async function create(headers: Record<string, string>, taskId = 'jwt-task') {
  return t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers, payload: checkpointBody(taskId) });
}

function expect401(res: { statusCode: number; json(): unknown }, detail: RegExp): void {
  expect(res.statusCode).toBe(401);
  expect(res.json()).toMatchObject({ code: 'unauthorized', detail: expect.stringMatching(detail) });
}

describe('JWT bearer tokens', () => {
  it('accepts a token signed by a published key, with role, tenant and subject from its claims', async () => {
    const res = await create(bearer(await token(first)));
    expect(res.statusCode).toBe(201);
    const audit = (await t.app.inject({ method: 'GET', url: '/v1/tasks/jwt-task/audit', headers: bearer(await token(first, { role: 'auditor' })) })).json() as { items: { actor: { subject: string; role: string } }[] };
    expect(audit.items[0]!.actor).toMatchObject({ subject: 'jwt:agent-7', role: 'writer' });
    // An auditor's token reads, and may not write.
    expect((await create(bearer(await token(first, { role: 'auditor' })))).statusCode).toBe(403);
  });

  it('keeps a tenant’s token to its tenant', async () => {
    expect((await create(bearer(await token(first, { tenant: 'acme' })), 'acme-task')).statusCode).toBe(201);
    expect((await t.app.inject({ method: 'GET', url: '/v1/tasks/acme-task', headers: auth('writer') })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/v1/tasks/acme-task', headers: auth('acmeWriter') })).statusCode).toBe(200);
  });

  it('keeps static tokens working beside JWTs', async () => {
    expect((await create(auth('writer'), 'static-task')).statusCode).toBe(201);
  });

  it('refuses an expired token', async () => {
    expect401(await create(bearer(await token(first, { exp: Math.floor(Date.now() / 1000) - 120 }))), /expired/);
  });

  it('refuses a token that is not valid yet', async () => {
    expect401(await create(bearer(await token(first, { nbf: Math.floor(Date.now() / 1000) + 3600 }))), /not valid yet/);
  });

  it('refuses another issuer and another audience', async () => {
    expect401(await create(bearer(await token(first, { issuer: 'https://elsewhere.test' }))), /another issuer/);
    expect401(await create(bearer(await token(first, { audience: 'someone-else' }))), /another audience/);
  });

  it('refuses a key the JWKS does not hold, and a signature that does not verify', async () => {
    expect401(await create(bearer(await token(stranger, {}).then((jwt) => jwt))), /(does not hold|does not verify)/);
    const [header, , signature] = (await token(first)).split('.');
    const forged = Buffer.from(JSON.stringify({ baton_role: 'admin', iss: ISSUER, aud: AUDIENCE, sub: 'mallory', exp: Math.floor(Date.now() / 1000) + 300 })).toString('base64url');
    expect401(await create(bearer(`${header}.${forged}.${signature}`)), /signature does not verify/);
  });

  it('refuses an unsigned token (alg none) and one without a Baton role', async () => {
    const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify({ baton_role: 'admin', iss: ISSUER, aud: AUDIENCE })).toString('base64url')}.`;
    expect401(await create(bearer(none)), /not accepted|not a valid JWT/);
    expect401(await create(bearer(await token(first, { role: '' }))), /baton_role/);
    expect401(await create(bearer(await token(first, { role: 'root' }))), /baton_role/);
  });

  it('follows a key rotation: a token of the new key is accepted once the JWKS publishes it', async () => {
    const second = await key('key-2');
    const before = fetches;
    published = [first, second];
    expect((await create(bearer(await token(second)))).statusCode).toBe(201);
    expect(fetches).toBeGreaterThan(before);
    // The old key retired: its tokens stop working once the set is fetched again.
    published = [second];
    const stale = await create(bearer(await token(await key('key-3'))));
    expect(stale.statusCode).toBe(401);
    expect401(await create(bearer(await token(first))), /does not hold/);
  });
});
