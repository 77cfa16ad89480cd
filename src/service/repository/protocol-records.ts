/**
 * Records kept under their id: the protocol's handoffs, recoveries and
 * leases, read by id (an acknowledgment names a handoff, a renewal a lease)
 * and written inside their task's transaction; and the write queue's dead
 * letters, listed page by page in id order.
 *
 * @module
 */
import { readRecord, writeRecord, type Subspace, type ValueCodec } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';

export class RecordRows<T extends { id: string }> {
  constructor(
    private readonly tx: Transaction,
    private readonly space: Subspace,
    private readonly codec: ValueCodec,
  ) {}

  get(id: string): Promise<T | undefined> {
    return readRecord<T>(this.tx, this.space, [id], this.codec);
  }

  async put(record: T): Promise<void> {
    await writeRecord(this.tx, this.space, [record.id], record, this.codec);
  }

  /** Up to `limit` records in id order, after `afterId` when given. Only for records kept whole (small ones). */
  async list(afterId: string | undefined, limit: number): Promise<T[]> {
    const { begin, end } = this.space.range();
    const start = afterId === undefined ? begin : this.space.range(afterId).end;
    const rows = await this.tx.getRange(start, end, { limit });
    return rows.map((row) => this.codec.decode(row.value, this.space.pack(this.space.unpack(row.key)[0]!)) as T);
  }
}
