/**
 * The rows of the audit trail: `(taskId, seq)` → a sealed entry. Entries are
 * only ever added; sealing them (the hash chain) is the domain's job.
 *
 * @module
 */
import type { AuditEntry } from '../../domain/audit.js';

import type { Transaction } from '../../store/store.js';
import { decodeWith, type Codecs } from './codec.js';
import type { Keyspace } from './keyspace.js';

export class AuditRows {
  constructor(
    private readonly tx: Transaction,
    private readonly ks: Keyspace,
    private readonly codecs: Codecs,
  ) {}

  append(entries: readonly AuditEntry[]): void {
    for (const entry of entries) {
      const key = this.ks.audit.pack(entry.taskId, entry.seq);
      this.tx.set(key, this.codecs.audit.encode(entry, key));
    }
  }

  /** Up to `limit` entries of a task after sequence `afterSeq`, in order. */
  async after(taskId: string, afterSeq: number, limit: number): Promise<AuditEntry[]> {
    const rows = await this.tx.getRange(this.ks.audit.pack(taskId, afterSeq + 1), this.ks.audit.range(taskId).end, { limit });
    return rows.map((row) => decodeWith<AuditEntry>(this.codecs.audit, row.value, row.key));
  }
}
