/**
 * `baton export` and `baton import`: a task's evidence bundle, a checkpoint
 * in one of the formats agents write, and a checkpoint file brought in.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { CliError, EXIT } from './errors.js';
import { json, request, server, type ServerOptions } from './http.js';

export const IMPORT_FORMATS = ['builder-state', 'pipeline', 'workflow-xml', 'markdown'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** What each format's documents are sent as. */
export const MEDIA_TYPE: Record<ImportFormat, string> = {
  'builder-state': 'application/json',
  pipeline: 'application/json',
  'workflow-xml': 'application/xml',
  markdown: 'text/markdown',
};

function write(out: string | undefined, data: Buffer): void {
  if (out === undefined) process.stdout.write(data);
  else writeFileSync(out, data);
}

/** `baton export TASK --out FILE`: the evidence bundle. */
export async function exportEvidence(taskId: string, out: string | undefined, options: ServerOptions): Promise<void> {
  const response = await request(server(options), 'GET', `/v1/tasks/${encodeURIComponent(taskId)}/evidence`);
  const data = Buffer.from(await response.arrayBuffer());
  write(out, data);
  if (out !== undefined) console.error(`evidence of ${taskId}: ${data.length} bytes in ${out}; check it as docs/verify-evidence.md shows`);
}

/** `baton export CHECKPOINT --format F`: the checkpoint in a format agents read. */
export async function exportCheckpoint(checkpointId: string, format: string, out: string | undefined, options: ServerOptions): Promise<void> {
  const response = await request(server(options), 'GET', `/v1/checkpoints/${encodeURIComponent(checkpointId)}/export?format=${encodeURIComponent(format)}`);
  write(out, Buffer.from(await response.arrayBuffer()));
}

export interface ImportRequest {
  format: ImportFormat;
  taskId?: string;
  agentId?: string;
  /** Sent as Idempotency-Key: the same document sent again creates nothing new. */
  idempotencyKey?: string;
}

/** Posts one document; answers the checkpoint created (or the first answer, for a repeat). */
export async function importDocument(document: Buffer, to: ImportRequest, options: ServerOptions): Promise<{ checkpoint: { id: string; taskId: string; version: number }; replayed: boolean }> {
  const query = new URLSearchParams({ format: to.format, ...(to.taskId ? { taskId: to.taskId } : {}), ...(to.agentId ? { agentId: to.agentId } : {}) });
  const response = await request(server(options), 'POST', `/v1/import?${query}`, {
    body: document,
    headers: { 'content-type': MEDIA_TYPE[to.format], ...(to.idempotencyKey ? { 'idempotency-key': to.idempotencyKey } : {}) },
  });
  const body = (await response.json()) as { checkpoint: { id: string; taskId: string; version: number } };
  return { checkpoint: body.checkpoint, replayed: response.headers.get('idempotent-replayed') === 'true' };
}

/** `baton import FILE --format F`. */
export async function importFile(file: string, to: Omit<ImportRequest, 'idempotencyKey'>, options: ServerOptions): Promise<void> {
  let document: Buffer;
  try {
    document = readFileSync(file);
  } catch {
    throw new CliError(`${file} cannot be read.`, EXIT.usage);
  }
  const key = `import:${createHash('sha256').update(document).digest('hex').slice(0, 48)}`;
  const { checkpoint, replayed } = await importDocument(document, { ...to, idempotencyKey: key }, options);
  console.log(`${replayed ? 'already imported' : 'imported'}: checkpoint ${checkpoint.id} of task ${checkpoint.taskId}`);
}

/** `baton tokens hash ROLE TOKEN [TENANT]`: the BATON_TOKENS_FILE line of a token (its SHA-256, never the token). */
export function tokenLine(role: string, token: string, tenant: string | undefined): string {
  if (!['writer', 'auditor', 'admin'].includes(role)) throw new CliError('ROLE must be writer, auditor or admin.', EXIT.usage);
  if (tenant !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(tenant)) throw new CliError('TENANT keeps to letters, digits, ".", "_" and "-" (at most 64).', EXIT.usage);
  const digest = createHash('sha256').update(token, 'utf8').digest('hex');
  return `${role}:${digest}${tenant ? `:${tenant}` : ''}`;
}

export async function rekey(options: ServerOptions): Promise<void> {
  const status = await json<{ state: string }>(server(options), 'POST', '/v1/admin/rekey');
  console.log(JSON.stringify(status));
}
