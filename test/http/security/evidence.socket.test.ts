/**
 * The evidence bundle, checked offline exactly as docs/verify-evidence.md
 * tells an auditor to: fetched over a real socket, unpacked with `tar`,
 * checked with `sha256sum -c`, its manifest's signature with `openssl
 * pkeyutl -verify -rawin`, and the audit chain's links recomputed with `jq`
 * and `sha256sum` in a shell loop. Then one file is altered and the check
 * that should notice does.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateSigner } from '../../../src/service/signing.js';
import { auth, buildTestApp, checkpointBody, TOKENS, type TestApp } from '../../support/app.js';

const work = mkdtempSync(join(tmpdir(), 'baton-evidence-'));
let t: TestApp;
let base: string;

/** The chain check of docs/verify-evidence.md, as the auditor runs it. */
const CHAIN_CHECK = `
prev=0000000000000000000000000000000000000000000000000000000000000000
while IFS= read -r line; do
  seq=$(printf '%s' "$line" | jq -r .seq)
  [ "$(printf '%s' "$line" | jq -r .prevHash)" = "$prev" ] || { echo "entry $seq: prevHash is not the hash before it"; exit 1; }
  want=$(printf '%s' "$line" | jq -r .hash)
  got=$(printf '%s%s' "$prev" "$(printf '%s' "$line" | jq -cS 'del(.hash)')" | sha256sum | cut -d' ' -f1)
  [ "$got" = "$want" ] || { echo "entry $seq: hash does not match its content"; exit 1; }
  prev=$want
done < audit.ndjson
echo "audit chain holds: $(wc -l < audit.ndjson) entries, tip $prev"
`;

function sh(dir: string, script: string): { ok: boolean; output: string } {
  try {
    return { ok: true, output: execFileSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, { method, headers: { ...auth('writer'), 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return (await res.json()) as Record<string, unknown>;
}

/** Fetches the bundle and unpacks it into a fresh directory. */
async function unpacked(name: string): Promise<string> {
  const res = await fetch(`${base}/v1/tasks/audited-task/evidence`, { headers: { authorization: `Bearer ${TOKENS.auditor}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/x-tar');
  const dir = join(work, name);
  execFileSync('mkdir', ['-p', dir]);
  writeFileSync(join(dir, 'bundle.tar'), Buffer.from(await res.arrayBuffer()));
  execFileSync('tar', ['-xf', 'bundle.tar'], { cwd: dir });
  return dir;
}

beforeAll(async () => {
  t = await buildTestApp({ app: { signer: loadOrCreateSigner(join(work, 'signing-key.pem')) } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const first = await send('POST', '/v1/checkpoints', checkpointBody('audited-task'));
  await send('PATCH', `/v1/checkpoints/${first.id}`, { labels: { reviewed: true } }, { 'if-match': '"1"', 'content-type': 'application/merge-patch+json' });
  const { handoff } = (await send('POST', `/v1/checkpoints/${first.id}/handoff`, { trigger: 'phase_complete', note: 'ready for review' })) as { handoff: { id: string } };
  await send('POST', `/v1/handoffs/${handoff.id}/ack`, { agentId: 'reviewer-1' });
});
afterAll(async () => {
  t.app.server.closeAllConnections();
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the evidence bundle', () => {
  it('holds the manifest, its signature, the public key, SHA256SUMS, the audit trail and every checkpoint version', async () => {
    const dir = await unpacked('contents');
    expect(readdirSync(dir).sort()).toEqual(['SHA256SUMS', 'audit.ndjson', 'bundle.tar', 'checkpoints', 'manifest.json', 'manifest.sig', 'public-key.pem']);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { taskId: string; audit: { entries: number }; checkpoints: { count: number; versions: number }; files: { path: string }[] };
    // The first checkpoint has three versions (created, patched, finalized by the handoff); the acknowledgment's child one.
    expect(manifest).toMatchObject({ taskId: 'audited-task', checkpoints: { count: 2, versions: 4 } });
    expect(manifest.audit.entries).toBe(readFileSync(join(dir, 'audit.ndjson'), 'utf8').trim().split('\n').length);
    expect(readFileSync(join(dir, 'manifest.sig')).length).toBe(64);
    // A checkpoint file is the text its hash covers: sha256sum of it is compliance.hash.
    const versions = manifest.files.filter((f) => f.path.startsWith('checkpoints/')).map((f) => f.path);
    const latest = (await (await fetch(`${base}/v1/tasks/audited-task/checkpoints/latest`, { headers: auth('writer') })).json()) as { id: string; compliance: { hash: string } };
    const digest = execFileSync('sha256sum', [`checkpoints/${latest.id}/v1.json`], { cwd: dir, encoding: 'utf8' }).split(' ')[0];
    expect(versions).toContain(`checkpoints/${latest.id}/v1.json`);
    expect(digest).toBe(latest.compliance.hash);
  });

  it('passes the offline check of docs/verify-evidence.md: sha256sum, openssl and the jq chain walk', async () => {
    const dir = await unpacked('intact');
    expect(sh(dir, 'sha256sum -c SHA256SUMS')).toMatchObject({ ok: true });
    expect(sh(dir, 'openssl pkeyutl -verify -pubin -inkey public-key.pem -rawin -in manifest.json -sigfile manifest.sig')).toMatchObject({ ok: true, output: expect.stringMatching(/Signature Verified Successfully/) });
    expect(sh(dir, CHAIN_CHECK)).toMatchObject({ ok: true, output: expect.stringMatching(/audit chain holds: \d+ entries/) });
  });

  it('fails that check when a checkpoint file, the manifest or an audit entry is altered', async () => {
    const checkpoint = await unpacked('altered-checkpoint');
    const file = execFileSync('bash', ['-c', 'ls checkpoints/*/v1.json | head -1'], { cwd: checkpoint, encoding: 'utf8' }).trim();
    writeFileSync(join(checkpoint, file), readFileSync(join(checkpoint, file), 'utf8').replace('wrote the parser', 'wrote the lexer'));
    expect(sh(checkpoint, 'sha256sum -c SHA256SUMS')).toMatchObject({ ok: false, output: expect.stringContaining(`${file}: FAILED`) });

    const manifest = await unpacked('altered-manifest');
    writeFileSync(join(manifest, 'manifest.json'), readFileSync(join(manifest, 'manifest.json'), 'utf8').replace('"audited-task"', '"another-task"'));
    expect(sh(manifest, 'openssl pkeyutl -verify -pubin -inkey public-key.pem -rawin -in manifest.json -sigfile manifest.sig')).toMatchObject({ ok: false });

    const audit = await unpacked('altered-audit');
    // Rewritten whole, with its digest fixed in SHA256SUMS: only the chain walk can tell.
    const lines = readFileSync(join(audit, 'audit.ndjson'), 'utf8').trim().split('\n');
    const entry = JSON.parse(lines[1]!) as { actor: { subject: string } };
    entry.actor.subject = 'someone-else';
    lines[1] = JSON.stringify(entry);
    writeFileSync(join(audit, 'audit.ndjson'), `${lines.join('\n')}\n`);
    expect(sh(audit, CHAIN_CHECK)).toMatchObject({ ok: false, output: expect.stringMatching(/entry 2: hash does not match/) });
  });

  it('is for auditors and admins, and names an unknown task 404', async () => {
    expect((await fetch(`${base}/v1/tasks/audited-task/evidence`, { headers: auth('writer') })).status).toBe(403);
    expect((await fetch(`${base}/v1/tasks/no-such-task/evidence`, { headers: auth('admin') })).status).toBe(404);
  });
});
