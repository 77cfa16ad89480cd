/**
 * What every service function is given: the store, the clock, metrics, a
 * logger, and where integrity findings go. Nothing here knows about HTTP.
 *
 * @module
 */
import type { FullDisk } from '../fs/free-space.js';
import type { Checkpoint } from '../domain/checkpoint.js';
import type { Actor, QueueableCommand, Queued } from '../domain/commands.js';
import type { BreakerSettings } from '../domain/recovery.js';
import type { FleetSettings } from '../domain/fleet-settings.js';
import type { Metrics } from '../metrics.js';
import type { Store } from '../store/store.js';
import type { Context } from '@opentelemetry/api';
import type { Keyring } from '../crypto/keyring.js';
import { Repository, type Corruption, type Sealing } from './repository/repository.js';
import { runTransaction } from './transactions.js';
import { runsReader, type RunsApartStore } from './indexer/runs-apart.js';
import type { Signer } from './signing.js';
import type { TaskLanes } from './task-lanes.js';

export interface ServiceLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/**
 * Where reads send the corrupt records they found. Reads never write: the
 * recording (an audit entry and a CHECKPOINT_CORRUPTED event, once per
 * record) is a command of its own, wired in when the app is built.
 */
export interface IntegrityReporter {
  report(ctx: ServiceContext, actor: Actor, found: readonly Corruption[]): Promise<void>;
}

/** What the fleet's maintenance duties need of the instance (`fleet/duties.ts`): who it is and how long a duty's lease lasts. */
export interface DutySettings {
  instanceId: string;
  ttlMs: number;
}

/** Wakes live event streams after a commit; `EventNotifier` in fleet/event-feed.ts is the one implementation. */
export interface CommitNotifier {
  /** A commit of this process wrote events of `tenant`. */
  notify(tenant: string): void;
  /** Calls `listener` after each commit, of any instance, that may have written events of `tenant`. */
  subscribe(tenant: string, listener: () => void): () => void;
}

/**
 * The durable local write queue, as the service sees it (src/queue holds it):
 * where writes go while the store is unavailable, and what reads lay over
 * the stored version of a checkpoint with writes still queued.
 */
export interface QueuePort {
  readonly depth: number;
  holds(tenant: string, taskId: string | undefined, checkpointId: string | undefined): boolean;
  replayed(tenant: string, operationId: string): boolean;
  touches(tenant: string, checkpointId: string): boolean;
  taskOf(tenant: string, checkpointId: string): string | undefined;
  enqueue(command: QueueableCommand, taskId: string | undefined, now: string): Promise<Queued>;
  overlay(tenant: string, checkpointId: string, base: Checkpoint | undefined): Checkpoint | undefined;
}

/** Encryption at rest (`vault.ts` holds the one implementation): each tenant's sealing. */
export interface VaultPort {
  readonly keyring: Keyring;
  sealing(ctx: ServiceContext, tenant: string): Promise<Sealing | undefined> | Sealing | undefined;
  /** A queued write's bytes sealed with its tenant's key, and opened again. */
  sealRecord(tenant: string, payload: Buffer): Buffer;
  openRecord(payload: Buffer): Buffer;
}

/** The fleet's bound on the full-text pending list (`indexer/pending-gate.ts`), over a shared store. */
export interface PendingGatePort {
  /** Undefined when a create of `tenant` may go on now; otherwise resolves when it may. */
  admit(tenant: string): Promise<void> | undefined;
}

export interface IndexerPort {
  /** A create added an entry to the pending list. */
  poke(): void;
  /** Resolves when a create may go on (the pending list is within its bound). */
  admit(): Promise<void>;
}

export interface ServiceContext {
  store: Store;
  /** Where the word runs the indexer's merges open are kept apart from `store` (`indexer/runs-apart.ts`); absent: in `store` (FoundationDB). */
  runsApart?: RunsApartStore;
  /** The trace this work belongs to (the request's span context, a background pass's); spans below are its children. */
  traceContext?: Context;
  metrics: Metrics;
  log: ServiceLogger;
  notifier: CommitNotifier;
  integrity: IntegrityReporter;
  /** Signs finalizations that ask for a signature; absent when no key is configured. */
  signer: Signer | undefined;
  /** The largest encoded checkpoint accepted, in bytes. */
  maxCheckpointBytes: number;
  /** How long a transaction keeps retrying conflicts before it gives up (ms). */
  transactionDeadlineMs: number;
  /** Where one process's writes to one task take turns; absent when they do not. */
  lanes?: TaskLanes;
  /** Seals what is stored and blinds index words; absent when encryption at rest is off. */
  vault?: VaultPort;
  /** This instance's id among the instances over the store (`fleet/instance.ts`); absent in a tool that is no instance. */
  instanceId?: string;
  /** Who does the fleet's maintenance duties (`fleet/duties.ts`); absent in a tool that runs none. */
  duties?: DutySettings;
  /** Merges the full-text pending list into the index (`indexer/indexer.ts`); absent where nothing merges it (a tool, a unit test). */
  indexer?: IndexerPort;
  /** Over a shared store, holds a tenant's creates while its full-text pending list is past its bound (`indexer/pending-gate.ts`); absent over LMDB and in a tool. */
  pendingGate?: PendingGatePort;
  /** Entries a tenant's full-text pending list may hold before its creates wait for the merge (`BATON_INDEXER_PENDING_BOUND`); half of `PENDING_LIMIT` when absent. */
  pendingBound?: number;
  /** Where writes go while the store is unavailable; absent when the queue is off. */
  queue?: QueuePort;
  /** Whether the data directory's disk refused the last commit for want of room; absent for a store without one here (FoundationDB). */
  dataDisk?: FullDisk;
  /** How far instances' clocks may disagree (ms): a lease stays its holder's until this long after its expiry. */
  clockSkewMs: number;
  /** The circuit breaker of recoveries. */
  breaker: BreakerSettings;
  /**
   * The settings that remove data as this instance's configuration gives
   * them: they seed a store that holds none, and stand in for the store's
   * only until it does (`fleet/settings.ts`). Decisions read the store's.
   */
  settingsSeed: FleetSettings;
  /** The CloudEvents `source` of this deployment. */
  eventSource: string;
  now(): Date;
}

/** Runs a read on a consistent snapshot of the tenant's acknowledged data, beside the writers. */
export async function snapshot<T>(ctx: ServiceContext, tenant: string, body: (repo: Repository) => Promise<T>): Promise<T> {
  const sealing = ctx.vault === undefined ? undefined : await ctx.vault.sealing(ctx, tenant);
  const apart = runsReader(ctx);
  return runTransaction(ctx, (tx) => body(new Repository(tx, tenant, sealing, apart)), { readOnly: true });
}
