/**
 * Audit entries and their chain: per task, each entry's
 * `hash = SHA-256(prevHash ‖ canonical(entry without hash))`. Sealing new
 * entries and checking a chain are pure; the service stores and reads them.
 *
 * @module
 */
import { canonicalJson, sha256Hex } from './hash.js';

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

/** The last entry of a task's chain: its sequence and hash (genesis: 0 and {@link GENESIS_HASH}). */
export interface ChainTip {
  seq: number;
  hash: string;
}

export function chainHash(prevHash: string, entry: Omit<AuditEntry, 'hash'>): string {
  return sha256Hex(prevHash + canonicalJson(entry));
}

/** Chains `drafts` after `tip`: the sealed entries and the new tip. */
export function sealEntries(taskId: string, tip: ChainTip, drafts: readonly AuditDraft[]): { entries: AuditEntry[]; tip: ChainTip } {
  let { seq, hash } = tip;
  const entries: AuditEntry[] = [];
  for (const draft of drafts) {
    seq += 1;
    const body: Omit<AuditEntry, 'hash'> = { ...stripUndefined(draft), seq, taskId, prevHash: hash };
    hash = chainHash(hash, body);
    entries.push({ ...body, hash });
  }
  return { entries, tip: { seq, hash } };
}

/** What a check compared where the chain broke: the sequence number, the link to the entry before, or the entry's own hash. */
export type ChainLink = { seq: number } | { prevHash: string } | { hash: string };

export interface ChainCheck {
  ok: boolean;
  entries: number;
  firstBrokenSeq?: number;
  reason?: string;
  /** Where the chain broke: what the entry should have held, given the entries before it. */
  expected?: ChainLink;
  /** What was found there instead (`seq: 0` when no entry was found at all). */
  found?: ChainLink;
}

/** Walks a task's chain from the start and names the first entry that does not hold. */
export function checkChain(entries: Iterable<AuditEntry>, state: { expectedSeq: number; prevHash: string; count: number }): ChainCheck | undefined {
  for (const entry of entries) {
    state.count += 1;
    const { hash, ...body } = entry;
    if (entry.seq !== state.expectedSeq) {
      return { ok: false, entries: state.count, firstBrokenSeq: state.expectedSeq, reason: 'missing entry', expected: { seq: state.expectedSeq }, found: { seq: entry.seq } };
    }
    if (entry.prevHash !== state.prevHash) {
      return { ok: false, entries: state.count, firstBrokenSeq: entry.seq, reason: 'broken link', expected: { prevHash: state.prevHash }, found: { prevHash: entry.prevHash } };
    }
    const recomputed = chainHash(state.prevHash, body);
    if (recomputed !== hash) return { ok: false, entries: state.count, firstBrokenSeq: entry.seq, reason: 'hash mismatch', expected: { hash: recomputed }, found: { hash } };
    state.prevHash = hash;
    state.expectedSeq += 1;
  }
  return undefined;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
