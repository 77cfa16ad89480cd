/**
 * The protocol's own records, each under its id: handoffs, recoveries and
 * leases. They are read by id (an acknowledgment names a handoff, a renewal a
 * lease) and always written inside their task's transaction.
 *
 * @module
 */
import { readRecord, writeRecord, type Subspace } from '../../store/keyspace.js';
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
}
