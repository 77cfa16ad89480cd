/**
 * The fleet's re-seal pass (`baton rekey`), one value under the system
 * space `rk`, plain MessagePack (it holds counts and instance ids, no
 * tenant's data). The instance running the pass rewrites it with each
 * batch and on a heartbeat; every instance reads it to answer
 * `GET /v1/admin/rekey`, and a start reads it in the starting transaction,
 * so two instances asked at once start one pass (`service/rekey.ts`).
 *
 * @module
 */
import { MESSAGE_PACK, systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';

export interface RekeyPassRecord {
  /** Minted by the instance that started the pass: a pass taken over by another start is no longer its holder's. */
  passId: string;
  /** As its holder last wrote it; a `running` pass whose heartbeat lapsed is reported `interrupted`. */
  state: 'running' | 'done' | 'failed' | 'interrupted';
  /** The instance that runs (or ran) it. */
  instanceId: string;
  startedAt: string;
  /** When its holder last wrote it (its own clock). */
  heartbeatAt: string;
  finishedAt?: string;
  tenants: number;
  scanned: number;
  resealed: number;
  reindexed: number;
  retired: string[];
  compacted?: boolean;
  error?: string;
}

const KEY = systemKeyspace().rekey.pack();

/** The last pass started on the store, or undefined when none ever was. */
export async function readRekeyPass(tx: Transaction): Promise<RekeyPassRecord | undefined> {
  const value = await tx.get(KEY);
  return value === undefined ? undefined : (MESSAGE_PACK.decode(Buffer.from(value), KEY) as RekeyPassRecord);
}

export function writeRekeyPass(tx: Transaction, pass: RekeyPassRecord): void {
  tx.set(KEY, MESSAGE_PACK.encode(pass, KEY));
}
