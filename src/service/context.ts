/**
 * What every service function is given: the store, the clock, metrics and a
 * logger. Nothing here knows about HTTP.
 *
 * @module
 */
import type { Metrics } from '../metrics.js';
import type { Store, TransactionBody } from '../store/store.js';
import type { EventNotifier } from './event-notifier.js';

export interface ServiceLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface ServiceContext {
  store: Store;
  metrics: Metrics;
  log: ServiceLogger;
  notifier: EventNotifier;
  /** The largest encoded checkpoint accepted, in bytes. */
  maxCheckpointBytes: number;
  /** The CloudEvents `source` of this deployment. */
  eventSource: string;
  now(): Date;
}

/** Who asks: the token's tenant, role and subject, and the agent when known. */
export interface Actor {
  tenant: string;
  role: 'writer' | 'auditor' | 'admin';
  subject: string;
}

/** How a write is made safe to repeat. */
export interface WriteOptions {
  /** The caller's Idempotency-Key, if any. */
  idempotencyKey?: string;
  /** A digest of the request; the same key with another fingerprint is refused. */
  fingerprint?: string;
  /** The fencing token sent with the write (`Baton-Lease-Epoch`), if any. */
  leaseEpoch?: number;
}

/** Runs a read on a consistent snapshot of acknowledged data, beside the writers. */
export function snapshot<T>(ctx: ServiceContext, body: TransactionBody<T>): Promise<T> {
  return ctx.store.transact(body, { readOnly: true });
}
