/**
 * HTTPS and mutual TLS over real sockets, with certificates made by
 * `openssl` for the test: a CA, a server certificate for 127.0.0.1, and a
 * client certificate. The served certificate is checked with `openssl
 * s_client`, as an operator would.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { configSchema, ConfigError } from '../../../src/config.js';
import { LmdbStore } from '../../../src/store/lmdb.js';
import { buildTestApp, TOKENS, type TestApp } from '../../support/app.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-tls-'));
const file = (name: string): string => join(dir, name);
const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

function makeCertificates(): void {
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Baton Test CA');
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=baton.test');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'server.ext');
  writeFileSync(file('client.ext'), 'extendedKeyUsage=clientAuth\n');
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=orchestrator');
  openssl('x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'client.pem', '-days', '2', '-extfile', 'client.ext');
  // A key of another certificate, to show a mismatch is refused at start.
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'other.key', '-out', 'other.pem', '-days', '2', '-subj', '/CN=other');
}

interface Answer {
  status: number;
  body: string;
}

function get(url: string, options: RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = send(url, { ...options, headers: { authorization: `Bearer ${TOKENS.writer}`, ...options.headers } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.setTimeout(5_000, () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

beforeAll(() => makeCertificates());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('HTTPS', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await buildTestApp({ config: { tlsCertFile: file('server.pem'), tlsKeyFile: file('server.key') } });
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    expect(url).toMatch(/^https:\/\//);
    port = Number(new URL(url).port);
  });
  afterAll(async () => t.close());

  it('answers over TLS with the configured certificate, and a client that trusts the CA verifies it', async () => {
    const answer = await get(`https://127.0.0.1:${port}/v1/checkpoints?taskId=none`, { ca: readFileSync(file('ca.pem')) });
    expect(answer.status).toBe(200);
    await expect(get(`https://127.0.0.1:${port}/healthz`)).rejects.toThrow(/self-signed|unable to verify|certificate/i);
  });

  it('is seen by openssl s_client as baton.test, signed by the test CA, verified', async () => {
    // Not spawnSync: the server runs in this process and must answer the handshake meanwhile.
    const output = await new Promise<string>((resolve) => {
      const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', file('ca.pem'), '-verify_return_error', '-brief'], { timeout: 10_000 }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`));
      child.stdin?.end();
    });
    expect(output).toMatch(/Verification: OK/);
    expect(output).toMatch(/CN ?= ?baton\.test/);
  });

  it('does not answer plain HTTP on the HTTPS port', async () => {
    const plain = await get(`http://127.0.0.1:${port}/healthz`).catch((error: Error) => error);
    expect(plain instanceof Error ? plain.message : `status ${plain.status}`).not.toBe('status 200');
  });
});

describe('mutual TLS', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildTestApp({ config: { tlsCertFile: file('server.pem'), tlsKeyFile: file('server.key'), tlsCaFile: file('ca.pem') } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => t.close());

  it('refuses a client without a certificate at the handshake', async () => {
    const error = await get(`${base}/healthz`, { ca: readFileSync(file('ca.pem')) }).then(
      (answer) => new Error(`answered ${answer.status}`),
      (error: Error) => error,
    );
    expect(error.message).not.toMatch(/^answered/);
  });

  it('serves a client whose certificate the CA signed, the token still deciding who it is', async () => {
    const tls = { ca: readFileSync(file('ca.pem')), cert: readFileSync(file('client.pem')), key: readFileSync(file('client.key')) };
    expect((await get(`${base}/v1/checkpoints?taskId=none`, tls)).status).toBe(200);
    expect((await get(`${base}/v1/checkpoints?taskId=none`, { ...tls, headers: { authorization: 'Bearer wrong-token-0000000000' } })).status).toBe(401);
  });
});

describe('a TLS configuration that cannot work', () => {
  it('stops the start with one sentence naming the variable', async () => {
    const store = LmdbStore.open({ path: join(dir, 'data') });
    const build = (tls: Record<string, string>) => buildApp({ config: configSchema.parse({ dataDir: join(dir, 'data'), tokens: `writer:${TOKENS.writer}`, ...tls }), store });
    await expect(build({ tlsCertFile: file('server.pem'), tlsKeyFile: file('other.key') })).rejects.toThrow(ConfigError);
    await expect(build({ tlsCertFile: file('server.pem'), tlsKeyFile: file('other.key') })).rejects.toThrow(/do not form a certificate and its private key/);
    await expect(build({ tlsCertFile: file('missing.pem'), tlsKeyFile: file('server.key') })).rejects.toThrow(/^BATON_TLS_CERT_FILE .* cannot be read/);
    await expect(build({ tlsCertFile: file('server.pem') })).rejects.toThrow(/go together/);
    await store.close();
  });
});
