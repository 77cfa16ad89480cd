/**
 * What the storage benchmark writes: a checkpoint write as Baton's repository
 * does it (a 2 KB MessagePack record plus a stamped outbox event, in one
 * transaction), and the baseline, a raw `lmdb` put of the same bytes on an
 * environment opened with `LmdbStore`'s durability settings.
 *
 * @module
 */
import { open, type Database, type RootDatabase } from 'lmdb';
import { encodeValue, setStampedTuple, tenantKeyspace, writeRecord } from '../../src/store/keyspace.js';
import type { Store } from '../../src/store/store.js';
import type { Op } from './commit-loop.js';

const RECORD_BYTES = 2048;

/** A tenant unique to the run: everything the run writes is under its prefix, so it can be cleared afterwards. */
const TENANT = `bench-${process.pid}-${Date.now()}`;
export const keyspace = tenantKeyspace(TENANT);

const taskId = (loop: number): string => `task-${String(loop).padStart(6, '0')}`;
const checkpointId = (n: number): string => `cp-${String(n).padStart(12, '0')}`;

/** Filler for the checkpoint's state, sized once so that the encoded record is RECORD_BYTES. */
const STATE = ((): string => {
  const probe = (len: number): number => encodeValue(record('task-000000', 'cp-000000000000', len > 0 ? 'x'.repeat(len) : '')).length;
  let len = RECORD_BYTES - probe(0);
  while (len > 0 && probe(len) > RECORD_BYTES) len--;
  // Printable, not all the same byte (no store here compresses, but stay honest).
  let s = '';
  for (let i = 0; s.length < len; i++) s += ((i * 7919) % 1_000_003).toString(36) + ' ';
  return s.slice(0, len);
})();

function record(task: string, id: string, state: string): Record<string, unknown> {
  return {
    id,
    taskId: task,
    agent: 'bench-agent',
    createdAt: 1_760_000_000_000,
    labels: { env: 'bench' },
    state,
  };
}

/** Bytes of one encoded record, and of the raw put's value. */
export const RECORD_SIZE = encodeValue(record(taskId(0), checkpointId(0), STATE)).length;

/** A checkpoint write as the repository does it: the 2 KB record plus a stamped outbox event. */
export function checkpointWrite(store: Store): Op {
  return async (loop, n) => {
    const task = taskId(loop);
    const id = checkpointId(n);
    const event = encodeValue({ specversion: '1.0', type: 'baton.checkpoint.created', source: '/bench', id, subject: task });
    await store.transact(async (tx) => {
      await writeRecord(tx, keyspace.checkpoints, [task, id], record(task, id, STATE));
      setStampedTuple(tx, keyspace.events, 0, [], event);
    });
  };
}

/** A bare `lmdb` environment at `path` and a put of RECORD_SIZE bytes per op; close it when done. */
export function rawLmdbPut(path: string): { op: Op; close: () => Promise<void> } {
  // The same environment settings as LmdbStore.open.
  const env: RootDatabase = open({
    path,
    maxDbs: 4,
    mapSize: 64 * 1024 ** 3,
    overlappingSync: false,
    noSync: false,
    compression: false,
  });
  const db: Database<Buffer, Buffer> = env.openDB<Buffer, Buffer>({ name: 'data', keyEncoding: 'binary', encoding: 'binary' });
  const value = Buffer.alloc(RECORD_SIZE);
  value.write(STATE.padEnd(RECORD_SIZE, ' '), 'latin1');
  const op: Op = async (loop, n) => {
    await db.put(keyspace.checkpoints.pack(taskId(loop), checkpointId(n), 0), value);
  };
  return { op, close: () => env.close() };
}
