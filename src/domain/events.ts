/**
 * The events Baton announces: CloudEvents 1.0, one type per state change
 * (DESIGN §3), and WRITE_DEAD_LETTERED for a queued write that could no
 * longer apply (DESIGN §5). Written in the same transaction as the change
 * they describe.
 *
 * @module
 */

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
  'WRITE_DEAD_LETTERED',
  'TASK_POLICY_SET',
  'LEGAL_HOLD_PLACED',
  'LEGAL_HOLD_RELEASED',
  'CHECKPOINTS_COMPACTED',
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
  /** The CloudEvents Distributed Tracing extension: the W3C trace context of the request that caused the change. */
  traceparent?: string;
  data: Record<string, unknown>;
}

/** What a change says about itself; the task transaction makes the CloudEvent. */
export interface EventDraft {
  type: EventType;
  subject: string;
  data: Record<string, unknown>;
}

export interface StoredEvent extends CloudEvent {
  /** Where this event sits in the stream; pass it as `after` to read on. */
  cursor: string;
}
