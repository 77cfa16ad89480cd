/**
 * `GET /v1/keys` lists every key that signed anything in the store, through
 * every instance (DESIGN §10): instance A signs a finalization with its key;
 * instance B, with another key, lists both, and A's key verifies the
 * signature B serves.
 */
import { createPublicKey, verify } from 'node:crypto';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadOrCreateSigner, signedPayload } from '../../src/service/signing.js';
import { auth, checkpointBody, useTestApp } from '../support/app.js';

const app = useTestApp();
let other: FastifyInstance | undefined;
afterEach(async () => {
  await other?.close();
  other = undefined;
});

it('lists the keys of every instance that signed, and the one that signed verifies', async () => {
  const t = app();
  const signerA = loadOrCreateSigner(join(t.dir, 'a.pem'));
  const signerB = loadOrCreateSigner(join(t.dir, 'b.pem'));
  const a = await buildApp({ config: { ...t.config, queueDir: join(t.dir, 'queue-a') }, store: t.store, signer: signerA });
  other = await buildApp({ config: { ...t.config, queueDir: join(t.dir, 'queue-b') }, store: t.store, signer: signerB });
  const made = await a.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('signed-fleet') });
  const id = (made.json() as { id: string }).id;
  expect((await a.inject({ method: 'POST', url: `/v1/checkpoints/${id}/finalize`, headers: auth(), payload: { status: 'completed', signature: { meaning: 'approval' } } })).statusCode).toBe(200);

  const keys = (await other.inject({ method: 'GET', url: '/v1/keys', headers: auth('auditor') })).json() as { items: { keyId: string; publicKeyPem: string }[] };
  expect(keys.items.map((k) => k.keyId).sort()).toEqual([signerA.publicKey.keyId, signerB.publicKey.keyId].sort());
  const read = (await other.inject({ method: 'GET', url: `/v1/checkpoints/${id}`, headers: auth() })).json() as {
    compliance: { hash: string; signature: { keyId: string; signer: string; meaning: string; signedAt: string; value: string } };
  };
  const { signature, hash } = read.compliance;
  expect(signature.keyId).toBe(signerA.publicKey.keyId);
  const pem = keys.items.find((k) => k.keyId === signature.keyId)!.publicKeyPem;
  expect(verify(null, signedPayload(signature, hash), createPublicKey(pem), Buffer.from(signature.value, 'base64'))).toBe(true);
  await a.close();
});
