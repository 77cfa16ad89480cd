/**
 * The audit trail: per-task entries chained by
 * `hash = SHA-256(prevHash ‖ canonical(entry without hash))`, appended in
 * the same transaction as the change they record, never rewritten.
 *
 * @module
 */
import { canonicalJson, sha256Hex } from '../domain/hash.js';
import { decodeValue, encodeValue, type Subspace } from '../store/keyspace.js';
import type { Transaction } from '../store/store.js';

export const GENESIS_HASH = '0'.repeat(64);

export interface AuditEntry {
  seq: number;
  taskId: string;
  at: string;
  actor: { subject: string; role: string; agentId?: string };
  action: string;
  checkpointId?: string;
  version?: number;
  beforeHash?: string;
  afterHash?: string;
  details?: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

export type AuditDraft = Omit<AuditEntry, 'seq' | 'taskId' | 'prevHash' | 'hash'>;

export function chainHash(prevHash: string, entry: Omit<AuditEntry, 'hash'>): string {
  return sha256Hex(prevHash + canonicalJson(entry));
}

/** Appends drafts after `(seq, hash)`; returns the new chain tip. */
export function appendAudit(
  tx: Transaction,
  audit: Subspace,
  taskId: string,
  tip: { seq: number; hash: string },
  drafts: AuditDraft[],
): { seq: number; hash: string } {
  let { seq, hash } = tip;
  for (const draft of drafts) {
    seq += 1;
    const body: Omit<AuditEntry, 'hash'> = { ...stripUndefined(draft), seq, taskId, prevHash: hash };
    hash = chainHash(hash, body);
    tx.set(audit.pack(taskId, seq), encodeValue({ ...body, hash }));
  }
  return { seq, hash };
}

export async function listAudit(
  tx: Transaction,
  audit: Subspace,
  taskId: string,
  afterSeq: number,
  limit: number,
): Promise<AuditEntry[]> {
  const rows = await tx.getRange(audit.pack(taskId, afterSeq + 1), audit.range(taskId).end, { limit });
  return rows.map((row) => decodeValue<AuditEntry>(row.value));
}

export interface ChainCheck {
  ok: boolean;
  entries: number;
  firstBrokenSeq?: number;
  reason?: string;
}

/** Walks a task's chain from the start and names the first entry that does not hold. */
export function checkChain(entries: Iterable<AuditEntry>, state: { expectedSeq: number; prevHash: string; count: number }): ChainCheck | undefined {
  for (const entry of entries) {
    state.count += 1;
    const { hash, ...body } = entry;
    if (entry.seq !== state.expectedSeq) return { ok: false, entries: state.count, firstBrokenSeq: state.expectedSeq, reason: 'missing entry' };
    if (entry.prevHash !== state.prevHash) return { ok: false, entries: state.count, firstBrokenSeq: entry.seq, reason: 'broken link' };
    if (chainHash(state.prevHash, body) !== hash) return { ok: false, entries: state.count, firstBrokenSeq: entry.seq, reason: 'hash mismatch' };
    state.prevHash = hash;
    state.expectedSeq += 1;
  }
  return undefined;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
