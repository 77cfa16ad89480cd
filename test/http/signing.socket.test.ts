import type { ChildProcess } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SignatureRecord } from '../../src/domain/checkpoint.js';
import { verifySignature } from '../../src/service/signing.js';
import { startServer } from '../support/server.js';

const TOKEN = 'writer-secret-0123456789abcdef';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

describe('finalization signatures on the embedded store, without a configured key', () => {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  afterEach(() => {
    child?.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function start(): Promise<string> {
    const server = startServer({ BATON_DATA_DIR: dir!, BATON_TOKENS: `writer:${TOKEN}` });
    child = server.child;
    return server.url;
  }

  it('signs with a key made once in the data directory, published at /v1/keys and kept across restarts', async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-sign-'));
    let base = await start();
    const created = (await (await fetch(`${base}/v1/checkpoints`, { method: 'POST', headers, body: JSON.stringify({ taskId: 'sign-1', agentId: 'a' }) })).json()) as { id: string };
    const res = await fetch(`${base}/v1/checkpoints/${created.id}/finalize`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ status: 'completed', signature: { meaning: 'approval' } }),
    });
    expect(res.status).toBe(200);
    const finalized = (await res.json()) as { compliance: { hash: string; signature: SignatureRecord } };
    const signature = finalized.compliance.signature;
    expect(signature).toMatchObject({ algorithm: 'Ed25519', meaning: 'approval' });
    const keys = ((await (await fetch(`${base}/v1/keys`, { headers })).json()) as { items: { keyId: string; publicKeyPem: string }[] }).items;
    expect(keys.map((k) => k.keyId)).toEqual([signature.keyId]);
    expect(verifySignature(createPublicKey(keys[0]!.publicKeyPem), signature, finalized.compliance.hash)).toBe(true);
    expect(statSync(join(dir, 'signing-key.pem')).mode & 0o777).toBe(0o600);

    child!.kill('SIGTERM');
    await new Promise((resolve) => child!.once('exit', resolve));
    base = await start();
    const again = ((await (await fetch(`${base}/v1/keys`, { headers })).json()) as { items: { keyId: string }[] }).items;
    expect(again.map((k) => k.keyId)).toEqual([signature.keyId]);
    const read = (await (await fetch(`${base}/v1/checkpoints/${created.id}`, { headers })).json()) as { compliance: { signature: SignatureRecord } };
    expect(read.compliance.signature).toEqual(signature);
  }, 30_000);
});
