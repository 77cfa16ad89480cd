/**
 * The evidence bundle of a task (DESIGN §4): what an auditor takes away and
 * checks offline with `tar`, `sha256sum`, `openssl` and `jq` alone
 * (`docs/verify-evidence.md`). A POSIX tar of
 *
 * - `checkpoints/<id>/v<N>.json`: every version of every checkpoint, as the
 *   canonical text its hash covers, so `sha256sum` of the file is its
 *   `compliance.hash`;
 * - `audit.ndjson`: the task's audit entries, one per line, hash-chained;
 * - `manifest.json`: the task, the time, the audit chain's length and tip,
 *   and every file above with its SHA-256 and size;
 * - `SHA256SUMS`: the same digests in `sha256sum -c` form (manifest.json
 *   included);
 * - `manifest.sig`: the raw 64-byte Ed25519 signature of `manifest.json`'s
 *   exact bytes, by the service's signing key, and `public-key.pem`, its
 *   public half (the key of `GET /v1/keys`).
 *
 * Everything is read in bounded pages, each its own read transaction.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { Actor } from '../domain/commands.js';
import { AppError } from '../errors.js';
import { auditEntries, taskExists } from './audit.js';
import { getCheckpoint, taskHistory } from './checkpoint-reads.js';
import type { ServiceContext } from './context.js';
import { tar, type TarFile } from './tar.js';

const PAGE = 100;

export interface Manifest {
  format: 'baton-evidence/1';
  tenant: string;
  taskId: string;
  generatedAt: string;
  generatedBy: string;
  audit: { entries: number; tipSeq: number; tipHash: string };
  checkpoints: { count: number; versions: number; corrupted: string[] };
  signature: { algorithm: 'Ed25519'; keyId: string; file: 'manifest.sig'; publicKey: 'public-key.pem' };
  files: { path: string; sha256: string; bytes: number }[];
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** The bundle of `taskId` as a tar archive, and its manifest. */
export async function evidenceBundle(ctx: ServiceContext, actor: Actor, taskId: string): Promise<{ archive: Buffer; manifest: Manifest }> {
  const signer = ctx.signer;
  if (signer === undefined) throw new AppError('signing_not_configured');
  if (!(await taskExists(ctx, actor, taskId))) throw new AppError('not_found', { detail: 'No task with this id exists.' });

  const files: TarFile[] = [];
  const corrupted: string[] = [];
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await taskHistory(ctx, actor, taskId, PAGE, cursor);
    corrupted.push(...(page.corrupted ?? []));
    for (const doc of page.items) {
      count += 1;
      const { id } = doc.checkpoint;
      for (let version = 1; version <= doc.version; version++) {
        const at = version === doc.version ? doc : await getCheckpoint(ctx, actor, id, version).catch((error: unknown) => {
          if (error instanceof AppError && error.code === 'checkpoint_corrupted') return undefined;
          throw error;
        });
        if (at === undefined) corrupted.push(`${id}@${version}`);
        else files.push({ path: `checkpoints/${id}/v${version}.json`, data: Buffer.from(at.canonical) });
      }
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);

  const lines: string[] = [];
  let tip = { seq: 0, hash: '0'.repeat(64) };
  for await (const entry of auditEntries(ctx, actor, taskId)) {
    lines.push(JSON.stringify(entry));
    tip = { seq: entry.seq, hash: entry.hash };
  }
  files.unshift({ path: 'audit.ndjson', data: Buffer.from(lines.map((line) => `${line}\n`).join('')) });
  const publicKey = { path: 'public-key.pem', data: Buffer.from(signer.publicKey.publicKeyPem) };
  files.unshift(publicKey);

  const manifest: Manifest = {
    format: 'baton-evidence/1',
    tenant: actor.tenant,
    taskId,
    generatedAt: ctx.now().toISOString(),
    generatedBy: actor.subject,
    audit: { entries: lines.length, tipSeq: tip.seq, tipHash: tip.hash },
    checkpoints: { count, versions: files.length - 2, corrupted },
    signature: { algorithm: 'Ed25519', keyId: signer.publicKey.keyId, file: 'manifest.sig', publicKey: 'public-key.pem' },
    files: files.map((file) => ({ path: file.path, sha256: sha256(file.data), bytes: file.data.length })),
  };
  const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
  const sums = [{ path: 'manifest.json', data: manifestBytes }, ...files].map((file) => `${sha256(file.data)}  ${file.path}\n`).join('');
  const archive = tar(
    [
      { path: 'manifest.json', data: manifestBytes },
      { path: 'manifest.sig', data: signer.signBytes(manifestBytes) },
      { path: 'SHA256SUMS', data: Buffer.from(sums) },
      ...files,
    ],
    Math.floor(ctx.now().getTime() / 1000),
  );
  return { archive, manifest };
}
