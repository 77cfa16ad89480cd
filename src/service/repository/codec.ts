/**
 * One value codec per keyspace space: how the values of each space become
 * bytes and back. Every repository file encodes and decodes through this
 * table, and nothing else of the service does, so the encoding of a space
 * changes here alone: MessagePack for every space today; sealed (encrypted
 * with the tenant's key, the key bound as associated data) where encryption
 * at rest applies (`docs/keyspace.md`, "Values"). Keys are not values: the
 * tuple layer packs them (`store/keyspace.ts`).
 *
 * @module
 */
import { MESSAGE_PACK, type SPACES, type ValueCodec } from '../../store/keyspace.js';

/** The spaces whose values the repository writes (the others hold empty values, or the store's own). */
type ValueSpace = Exclude<keyof typeof SPACES, 'links' | 'idempotency' | 'operations'>;

export const CODECS: Readonly<Record<ValueSpace, ValueCodec>> = {
  checkpoints: MESSAGE_PACK,
  revisions: MESSAGE_PACK,
  ids: MESSAGE_PACK,
  tasks: MESSAGE_PACK,
  history: MESSAGE_PACK,
  index: MESSAGE_PACK,
  parents: MESSAGE_PACK,
  audit: MESSAGE_PACK,
  events: MESSAGE_PACK,
  handoffs: MESSAGE_PACK,
  recoveries: MESSAGE_PACK,
  leases: MESSAGE_PACK,
  meta: MESSAGE_PACK,
  deadLetters: MESSAGE_PACK,
};

/** The typed reading of `bytes` from `space`. */
export function decode<T>(space: ValueSpace, bytes: Uint8Array): T {
  return CODECS[space].decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as T;
}
