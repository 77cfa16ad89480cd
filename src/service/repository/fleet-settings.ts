/**
 * The fleet's settings that remove data (`domain/fleet-settings.ts`), one
 * value under the system space `set`, plain MessagePack (they are no
 * tenant's data). Every write transaction reads them (its task's expiry and
 * compaction follow from them), so the value's bytes are compared with the
 * last ones decoded rather than decoded again.
 *
 * @module
 */
import type { FleetSettings } from '../../domain/fleet-settings.js';
import { MESSAGE_PACK, systemKeyspace } from '../../store/keyspace.js';
import type { Transaction } from '../../store/store.js';

const KEY = systemKeyspace().settings.pack();
let last: { bytes: Buffer; settings: FleetSettings } | undefined;

/** The settings the store holds, or undefined when no instance has written them yet. */
export async function readFleetSettings(tx: Transaction): Promise<FleetSettings | undefined> {
  const value = await tx.get(KEY);
  if (value === undefined) return undefined;
  if (last !== undefined && last.bytes.equals(value)) return last.settings;
  const settings = Object.freeze(MESSAGE_PACK.decode(Buffer.from(value), KEY) as FleetSettings);
  last = { bytes: Buffer.from(value), settings };
  return settings;
}

export function writeFleetSettings(tx: Transaction, settings: FleetSettings): void {
  tx.set(KEY, MESSAGE_PACK.encode(settings, KEY));
}
