/**
 * The checkpoint repository: the one place that knows the key layout
 * (`docs/keyspace.md`). Services speak tasks, checkpoints, links, index
 * entries, audit entries and events to it, inside a transaction they run on
 * the store; they never see a key. Only service modules use it: routes, the
 * queue, the formats and the LangGraph adapter reach the data through the
 * service (the adapter through HTTP, like any agent).
 *
 * @module
 */
import type { DeadLetter } from '../../domain/dead-letter.js';
import type { FleetSettings } from '../../domain/fleet-settings.js';
import { readFleetSettings } from './fleet-settings.js';
import { noteSigningKey, type SigningKeyEntry } from './signing-keys.js';
import type { Handoff } from '../../domain/handoff.js';
import type { Lease } from '../../domain/leases.js';
import type { Recovery } from '../../domain/recovery.js';
import type { Transaction } from '../../store/store.js';
import { AuditRows } from './audit-log.js';
import { CheckpointRows } from './checkpoints.js';
import { IndexRows } from './indexes.js';
import { codecsFor, type Sealing } from './codec.js';
import { HeaderRows } from './header.js';
import { WriteBudget } from './write-budget.js';
import { JobRows } from './maintenance-jobs.js';
import { keyspaceOf } from './keyspace.js';
import { LeaseExpiryRows } from './lease-expiry.js';
import { LinkRows } from './links.js';
import { OperationRows } from './operations.js';
import { OutboxRows } from './outbox.js';
import { RecordRows } from './protocol-records.js';
import { READ_BUDGET, ReadBudget } from './read-budget.js';
import { TaskRows } from './tasks.js';
import { TermRows, type RunsApart } from './terms.js';

/** One tenant's data as seen by one transaction. */
export class Repository {
  readonly tasks: TaskRows;
  readonly checkpoints: CheckpointRows;
  readonly links: LinkRows;
  readonly index: IndexRows;
  readonly terms: TermRows;
  readonly audit: AuditRows;
  readonly events: OutboxRows;
  readonly operations: OperationRows;
  readonly handoffs: RecordRows<Handoff>;
  readonly recoveries: RecordRows<Recovery>;
  readonly leases: RecordRows<Lease>;
  readonly leaseExpiry: LeaseExpiryRows;
  readonly deadLetters: RecordRows<DeadLetter>;
  readonly header: HeaderRows;
  readonly jobs: JobRows;
  private readonly tx: Transaction;

  /**
   * `sealing`: the tenant's keys when encryption at rest is on (`service/vault.ts`);
   * `apart`: the word runs kept apart from `tx`'s store (`indexer/runs-apart.ts`).
   */
  constructor(tx: Transaction, tenant: string, sealing?: Sealing, apart?: RunsApart) {
    this.tx = tx;
    const ks = keyspaceOf(tenant);
    const codecs = codecsFor(sealing);
    this.index = new IndexRows(tx, ks.index, codecs, sealing);
    this.tasks = new TaskRows(tx, ks, codecs);
    this.terms = new TermRows(tx, ks, codecs, sealing, tenant, apart);
    this.checkpoints = new CheckpointRows(tx, ks, this.index, this.terms, codecs);
    this.links = new LinkRows(tx, ks, codecs);
    this.audit = new AuditRows(tx, ks, codecs);
    this.events = new OutboxRows(tx, ks, codecs);
    this.operations = new OperationRows(tx, ks, tenant, codecs);
    this.handoffs = new RecordRows(tx, ks.handoffs, codecs.handoffs);
    this.recoveries = new RecordRows(tx, ks.recoveries, codecs.recoveries);
    this.leases = new RecordRows(tx, ks.leases, codecs.leases);
    this.leaseExpiry = new LeaseExpiryRows(tx, tenant);
    this.deadLetters = new RecordRows(tx, ks.deadLetters, codecs.deadLetters);
    this.header = new HeaderRows(tx, ks, tenant, codecs);
    this.jobs = new JobRows(tx, tenant);
  }

  /** Notes a public key that signs (`signing-keys.ts`). */
  noteSigningKey(entry: SigningKeyEntry): void {
    noteSigningKey(this.tx, entry);
  }

  /** The fleet's settings that remove data, as the store holds them (undefined until an instance wrote them). */
  fleetSettings(): Promise<FleetSettings | undefined> {
    return readFleetSettings(this.tx);
  }

  /** A write budget over this transaction's own counters, for the batches of a long pass. */
  writeBudget(): WriteBudget {
    return new WriteBudget(this.tx);
  }

  /** A read budget over this transaction's own counters ({@link READ_BUDGET}); `fromNow`: what was read before is not counted. */
  budget(fromNow = false): ReadBudget {
    return new ReadBudget(this.tx, READ_BUDGET, fromNow);
  }
}

export type { Corruption, HistoryEntry, Loaded, RevisionEntry } from './checkpoints.js';
export { filePaths, indexTerm, IndexRows, labelTerm, fileWord, type IndexHit, type IndexName, type IndexPosition } from './indexes.js';
export { comparePositions, runKeys, type RunsApart, type TermRun } from './terms.js';
export { packInLayout, servedKeyLayout, type KeyLayout } from './key-layout.js';
export { pendingCounts, tenantsWithPendingTerms, type PendingEntry } from './pending-terms.js';
export { dueLeases, type DueLease } from './lease-expiry.js';
export { expireOperations } from './operation-expiry.js';
export { expiredTasks, pendingJobs, type Job } from './maintenance-jobs.js';
export { WriteBudget } from './write-budget.js';
export { OperationReusedError } from './operations.js';
export { READ_BUDGET, ReadBudget, type ReadLimits } from './read-budget.js';
export type { OutboxRow } from './outbox.js';
export { CheckpointDoc, toStored, verifyStored, type StoredCheckpoint } from './records.js';
export type { TaskHead } from './tasks.js';
export { STORE_FORMAT, tenants, type StoreHeader } from './header.js';
export { adoptKeyLayout, forgetKeyLayout } from './key-layout.js';
export { zstdMissing } from './compression.js';
export { compressAhead, rethrowMissingKey, type Sealing } from './codec.js';
export { forgetKey, noteKeys, usedKeys } from './key-registry.js';
export { readFleetSettings, writeFleetSettings } from './fleet-settings.js';
export { noteSigningKey, signingKeys, type SigningKeyEntry } from './signing-keys.js';
export { listInstances, putInstance, removeInstance, type InstanceEntry } from './instances.js';
export { clearDutyLease, getDutyLease, putDutyLease, type DutyLease } from './duty-leases.js';
export { resealBatch, type ResealPosition } from './reseal.js';
export { readRekeyPass, writeRekeyPass, type RekeyPassRecord } from './rekey-pass.js';
