/**
 * Records kept under their id: the protocol's handoffs, recoveries and
 * leases, read by id (an acknowledgment names a handoff, a renewal a lease)
 * and written inside their task's transaction; and the write queue's dead
 * letters, listed page by page in id order.
 *
 * @module
 */
import { decodeValue, readRecord, writeRecord, type Subspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';

export class RecordRows<T extends { id: string }> {
  constructor(
    private readonly tx: Transaction,
    private readonly space: Subspace,
  ) {}

  get(id: string): Promise<T | undefined> {
    return readRecord<T>(this.tx, this.space, [id]);
  }

  async put(record: T): Promise<void> {
    await writeRecord(this.tx, this.space, [record.id], record);
  }

  /** Up to `limit` records in id order, after `afterId` when given. Only for records kept whole (small ones). */
  async list(afterId: string | undefined, limit: number): Promise<T[]> {
    const { begin, end } = this.space.range();
    const start = afterId === undefined ? begin : this.space.range(afterId).end;
    const rows = await this.tx.getRange(start, end, { limit });
    return rows.map((row) => decodeValue<T>(row.value));
  }
}
