/**
 * The transactional outbox: CloudEvents 1.0 written in the same transaction
 * as the change they describe, under keys that sort in commit order. An
 * event's cursor is the hex of its 12-byte versionstamp.
 *
 * @module
 */
import { decodeValue, encodeValue, setStampedTuple, type Subspace } from '../store/keyspace.js';
import type { Transaction } from '../store/store.js';

export const EVENT_TYPES = [
  'CHECKPOINT_CREATED',
  'CHECKPOINT_UPDATED',
  'CHECKPOINT_FINALIZED',
  'CHECKPOINTS_LINKED',
  'AGENT_HANDOFF',
  'HANDOFF_ACKNOWLEDGED',
  'RECOVERY_INITIATED',
  'RECOVERY_COMPLETED',
  'TASK_BLOCKED',
  'CHECKPOINT_CORRUPTED',
  'LEASE_ACQUIRED',
  'LEASE_EXPIRED',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface CloudEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: EventType;
  time: string;
  subject: string;
  datacontenttype: 'application/json';
  data: Record<string, unknown>;
}

export interface EventDraft {
  type: EventType;
  subject: string;
  data: Record<string, unknown>;
}

export interface StoredEvent extends CloudEvent {
  /** Where this event sits in the stream; pass it as `after` to read on. */
  cursor: string;
}

/** Writes events in the given order; the stamp orders them against other commits. */
export function appendEvents(tx: Transaction, events: Subspace, drafts: CloudEvent[]): void {
  drafts.forEach((event, order) => setStampedTuple(tx, events, order, [], encodeValue(event)));
}

const CURSOR = /^[0-9a-f]{24}$/;

export function isEventCursor(value: string): boolean {
  return CURSOR.test(value);
}

/** Events after `cursor` (exclusive), oldest first, at most `limit`, optionally only some types. */
export async function readEvents(
  tx: Transaction,
  events: Subspace,
  after: string | undefined,
  limit: number,
  types: ReadonlySet<string> | undefined,
): Promise<{ items: StoredEvent[]; last: string | undefined }> {
  const range = events.range();
  let begin = range.begin;
  if (after !== undefined) {
    const stampKey = events.pack({ type: 'versionstamp', value: Buffer.from(after, 'hex') } as never);
    begin = Buffer.concat([stampKey, Buffer.from([0x00])]);
  }
  const items: StoredEvent[] = [];
  let last: string | undefined;
  const batch = Math.max(limit, 100);
  // Filtering by type may skip many events; read on in batches until the page is full.
  for (let scanned = 0; items.length < limit && scanned < 10_000; ) {
    const rows = await tx.getRange(begin, range.end, { limit: batch });
    if (rows.length === 0) break;
    for (const row of rows) {
      scanned += 1;
      const stamp = (events.unpack(row.key)[0] as unknown as { value: Buffer }).value;
      const cursor = stamp.toString('hex');
      last = cursor;
      const event = decodeValue<CloudEvent>(row.value);
      if (types === undefined || types.has(event.type)) items.push({ ...event, cursor });
      if (items.length >= limit) break;
    }
    begin = Buffer.concat([rows[rows.length - 1]!.key, Buffer.from([0x00])]);
    if (rows.length < batch) break;
  }
  return { items, last };
}
