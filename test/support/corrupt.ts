/**
 * Damage a checkpoint's stored bytes behind Baton's back, keeping its old
 * hash, as a disk fault or an intruder would: its next read fails Baton's
 * hash check.
 */
import type { Checkpoint } from '../../src/client/index.js';
import { compress, decompress } from '../../src/service/repository/compression.js';
import { decodeValue, encodeValue, tenantKeyspace } from '../../src/store/keyspace.js';
import type { Store } from '../../src/store/store.js';

export async function corruptCheckpoint(store: Store, doc: Pick<Checkpoint, 'taskId' | 'id'>): Promise<void> {
  const key = tenantKeyspace('default').checkpoints.pack(doc.taskId, doc.id, 0);
  await store.transact(async (tx) => {
    const record = decodeValue<{ c: string; h: string }>(decompress(Buffer.from((await tx.get(key))!)));
    // One character of the stored text changes: the text no longer matches its hash.
    tx.set(key, compress(encodeValue({ ...record, c: record.c.replace('"taskId":', '"taskId" :') })));
  });
}
