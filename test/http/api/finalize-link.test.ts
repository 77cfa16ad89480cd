/**
 * Finalization (with optional Ed25519 signatures, DESIGN §4) and lineage
 * links (DESIGN §3).
 */
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SignatureRecord } from '../../../src/domain/checkpoint.js';
import { loadSigner, verifySignature } from '../../../src/service/signing.js';
import { jcs, sha256 } from '../../domain/hash/harness.js';
import { auth, buildTestApp, checkpointBody, type TestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';

let t: TestApp;
let keyDir: string | undefined;
afterEach(async () => {
  await t.close();
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  keyDir = undefined;
});

async function create(taskId = 'task-fin', extra: Json = {}): Promise<Json> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, extra) });
  expect(res.statusCode).toBe(201);
  return res.json() as Json;
}

function finalize(id: unknown, body: unknown) {
  return t.app.inject({ method: 'POST', url: `/v1/checkpoints/${String(id)}/finalize`, headers: auth(), payload: body as Json });
}

function link(parentId: unknown, childId: unknown) {
  return t.app.inject({ method: 'POST', url: `/v1/checkpoints/${String(parentId)}/links`, headers: auth(), payload: { childId } });
}

async function get(url: string): Promise<Json> {
  const res = await t.app.inject({ method: 'GET', url, headers: auth() });
  expect(res.statusCode).toBe(200);
  return res.json() as Json;
}

const ids = (nodes: unknown) => (nodes as { id: string }[]).map((n) => n.id);

describe('POST /v1/checkpoints/:id/finalize', () => {
  it('finalizes: status finalized, finalStatus, finalizedAt, version +1; a second time is 409', async () => {
    t = await buildTestApp();
    const cp = await create();
    const res = await finalize(cp.id, { status: 'completed' });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"2"');
    const fin = res.json() as Json;
    expect(fin).toMatchObject({ id: cp.id, status: 'finalized', finalStatus: 'completed', version: 2 });
    expect(Number.isNaN(Date.parse(String(fin.finalizedAt)))).toBe(false);
    expect(String(fin.finalizedAt) >= String(cp.createdAt)).toBe(true);
    expect(fin.compliance).toMatchObject({ hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((fin.compliance as Json).signature).toBeUndefined();
    expect(await get(`/v1/checkpoints/${String(cp.id)}`)).toEqual(fin);

    expectProblem(await finalize(cp.id, { status: 'failed' }), 409, 'checkpoint_finalized');
    expect(await get(`/v1/checkpoints/${String(cp.id)}`)).toMatchObject({ version: 2, finalStatus: 'completed' });
  });

  it('finalizes while PATCHes race it: finalize succeeds, each PATCH lands before it or gets checkpoint_finalized', async () => {
    t = await buildTestApp();
    const cp = await create();
    const patches = Array.from({ length: 10 }, (_, i) =>
      t.app.inject({ method: 'PATCH', url: `/v1/checkpoints/${String(cp.id)}`, headers: { ...auth(), 'if-match': '*' }, payload: { labels: { [`k${i}`]: 'v' } } }),
    );
    const settled = await Promise.all([...patches, finalize(cp.id, { status: 'completed' })]);
    const fin = settled.pop();
    const answers = settled;
    expect(fin!.statusCode, fin!.body).toBe(200);
    for (const res of answers) {
      if (res.statusCode !== 200) expectProblem(res, 409, 'checkpoint_finalized');
    }
    const applied = answers.filter((r) => r.statusCode === 200).length;
    const now = await get(`/v1/checkpoints/${String(cp.id)}`);
    expect(now).toMatchObject({ status: 'finalized', version: applied + 2 });
  });

  it('refuses an unknown final status with 400 naming status', async () => {
    t = await buildTestApp();
    const cp = await create();
    const body = expectProblem(await finalize(cp.id, { status: 'done' }), 400, 'validation_failed');
    expect((body.errors as { field: string }[]).map((e) => e.field)).toContain('status');
    expect(await get(`/v1/checkpoints/${String(cp.id)}`)).toMatchObject({ status: 'active', version: 1 });
  });

  it('refuses a signature when no signing key is configured, naming signature', async () => {
    t = await buildTestApp();
    const cp = await create();
    const body = expectProblem(await finalize(cp.id, { status: 'completed', signature: { meaning: 'approval' } }), 400, 'validation_failed');
    expect((body.errors as { field: string }[]).map((e) => e.field)).toContain('signature');
    expect(await get(`/v1/checkpoints/${String(cp.id)}`)).toMatchObject({ status: 'active', version: 1 });
    expect(await get('/v1/keys')).toEqual({ items: [] });
  });

  it('signs with Ed25519 when a key is configured; the signature verifies against GET /v1/keys', async () => {
    keyDir = mkdtempSync(join(tmpdir(), 'baton-key-'));
    const keyFile = join(keyDir, 'signing.pem');
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }));
    t = await buildTestApp({ app: { signer: loadSigner(keyFile) } });
    const cp = await create();
    const res = await finalize(cp.id, { status: 'completed', signature: { meaning: 'approval' } });
    expect(res.statusCode).toBe(200);
    const fin = res.json() as Json;
    const compliance = fin.compliance as { hash: string; signature: SignatureRecord };
    expect(compliance.signature).toMatchObject({ algorithm: 'Ed25519', meaning: 'approval', signer: expect.any(String), keyId: expect.any(String) });
    expect(compliance.signature.signer).not.toBe('');

    const keys = (await get('/v1/keys')) as { items: { keyId: string; publicKeyPem: string }[] };
    const published = keys.items.find((k) => k.keyId === compliance.signature.keyId);
    expect(published).toBeDefined();
    const publicKey = createPublicKey(published!.publicKeyPem);
    expect(verifySignature(publicKey, compliance.signature, compliance.hash)).toBe(true);
    // Independently (the test suite's own RFC 8785 serialiser, not the package src uses):
    // the signed payload is the canonical JSON of hash, signer, meaning and time.
    const { signer, meaning, signedAt } = compliance.signature;
    const payload = Buffer.from(jcs({ hash: compliance.hash, signer, meaning, signedAt }));
    expect(verify(null, payload, publicKey, Buffer.from(compliance.signature.value, 'base64'))).toBe(true);
    // A signature over another hash does not verify.
    expect(verifySignature(publicKey, compliance.signature, 'e'.repeat(64))).toBe(false);

    // The hash still covers the content without the signature, and a read returns the signature too.
    const read = await get(`/v1/checkpoints/${String(cp.id)}`);
    expect(read).toEqual(fin);
    const { hash: _h, signature: _s, ...rest } = compliance;
    const expected = sha256(jcs({ ...fin, compliance: rest }));
    expect(compliance.hash).toBe(expected);
  });
});

describe('links and lineage', () => {
  it('links a child to a parent: 201, parentId set, lineage both ways', async () => {
    t = await buildTestApp();
    const parent = await create('task-link');
    const child = await create('task-link');
    const res = await link(parent.id, child.id);
    expect(res.statusCode).toBe(201);
    expect((await get(`/v1/checkpoints/${String(child.id)}`)).parentId).toBe(parent.id);
    const childLineage = await get(`/v1/checkpoints/${String(child.id)}/lineage`);
    expect(ids(childLineage.ancestors)).toEqual([parent.id]);
    expect(ids(childLineage.children)).toEqual([]);
    const parentLineage = await get(`/v1/checkpoints/${String(parent.id)}/lineage`);
    expect(ids(parentLineage.ancestors)).toEqual([]);
    expect(ids(parentLineage.children)).toEqual([child.id]);
  });

  it('lists every ancestor up to the root, nearest first', async () => {
    t = await buildTestApp();
    const [a, b, c] = [await create('task-chain'), await create('task-chain'), await create('task-chain')];
    expect((await link(a!.id, b!.id)).statusCode).toBe(201);
    expect((await link(b!.id, c!.id)).statusCode).toBe(201);
    expect(ids((await get(`/v1/checkpoints/${String(c!.id)}/lineage`)).ancestors)).toEqual([b!.id, a!.id]);
  });

  it('refuses a second parent with 409 already_linked', async () => {
    t = await buildTestApp();
    const [p1, p2, child] = [await create(), await create(), await create()];
    expect((await link(p1!.id, child!.id)).statusCode).toBe(201);
    expectProblem(await link(p2!.id, child!.id), 409, 'already_linked');
    expect((await get(`/v1/checkpoints/${String(child!.id)}`)).parentId).toBe(p1!.id);
  });

  it('refuses a cycle and a self-link with 409 link_cycle', async () => {
    t = await buildTestApp();
    const [a, b, c] = [await create(), await create(), await create()];
    expect((await link(a!.id, b!.id)).statusCode).toBe(201);
    expect((await link(b!.id, c!.id)).statusCode).toBe(201);
    expectProblem(await link(c!.id, a!.id), 409, 'link_cycle');
    expect((await get(`/v1/checkpoints/${String(a!.id)}`)).parentId).toBeUndefined();
    expectProblem(await link(a!.id, a!.id), 409, 'link_cycle');
  });

  it('answers 404 when the parent does not exist', async () => {
    t = await buildTestApp();
    const child = await create();
    expectProblem(await link('0190f5c2-0000-7000-8000-000000000000', child.id), 404, 'not_found');
    expect((await get(`/v1/checkpoints/${String(child.id)}`)).parentId).toBeUndefined();
  });

  it('links at creation when the body names parentId; an unknown parentId is 400 naming parentId', async () => {
    t = await buildTestApp();
    const parent = await create('task-born');
    const child = await create('task-born', { parentId: parent.id });
    expect(child.parentId).toBe(parent.id);
    expect(ids((await get(`/v1/checkpoints/${String(child.id)}/lineage`)).ancestors)).toEqual([parent.id]);
    expect(ids((await get(`/v1/checkpoints/${String(parent.id)}/lineage`)).children)).toEqual([child.id]);

    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/checkpoints',
      headers: auth(),
      payload: checkpointBody('task-orphan', { parentId: '0190f5c2-0000-7000-8000-000000000000' }),
    });
    const body = expectProblem(res, 400, 'validation_failed');
    expect((body.errors as { field: string }[]).map((e) => e.field)).toContain('parentId');
    expect((await t.app.inject({ method: 'GET', url: '/v1/tasks/task-orphan/checkpoints', headers: auth() })).statusCode).toBe(404);
  });
});
