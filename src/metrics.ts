/**
 * The service's Prometheus metrics, over a registry of their own. Every call
 * makes a new registry, so tests can build many apps in one process without
 * the metrics of one leaking into another; nothing uses prom-client's global
 * default registry. The service layer records into these, so this module
 * knows nothing of HTTP frameworks.
 *
 * @module
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { diskSpace } from './fs/free-space.js';

/** Store operations take from well under a millisecond (LMDB reads) to seconds (FDB retries). */
const STORE_LATENCY_BUCKETS_MS = [0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];
/** Typical checkpoints are a few KB; the default ceiling is 1 MiB, configurable up to 4 MiB. */
const SIZE_BUCKETS_BYTES = [512, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216, 67_108_864];
const HTTP_DURATION_BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000];

export function createMetrics() {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  /** The directories whose disks are reported, by role (`data`, `queue`), read at every scrape. */
  const disks = new Map<string, string>();
  const space = (dir: string) => diskSpace(dir) ?? { freeBytes: 0, sizeBytes: 0 };

  const metrics = {
    registry,
    checkpointWriteLatency: new Histogram({
      name: 'checkpoint_write_latency_ms',
      help: 'Time to durably commit a checkpoint write, in milliseconds.',
      labelNames: ['operation'] as const,
      buckets: STORE_LATENCY_BUCKETS_MS,
      registers,
    }),
    checkpointReadLatency: new Histogram({
      name: 'checkpoint_read_latency_ms',
      help: 'Time to read and verify checkpoints, in milliseconds.',
      labelNames: ['operation'] as const,
      buckets: STORE_LATENCY_BUCKETS_MS,
      registers,
    }),
    handoffSuccessRate: new Gauge({
      name: 'handoff_success_rate',
      help: 'Share of the handoffs initiated in this process that this process saw acknowledged, between 0 and 1; per process, so for a fleet divide the sums of handoffs_total by stage instead.',
      registers,
    }),
    handoffs: new Counter({
      name: 'handoffs_total',
      help: 'Handoffs by stage: initiated (an agent handed off) and acknowledged (a receiving agent took it).',
      labelNames: ['stage'] as const,
      registers,
    }),
    recoveryAttempts: new Counter({
      name: 'recovery_attempts_total',
      help: 'Recoveries asked for, including those the circuit breaker blocked.',
      registers,
    }),
    checkpointSize: new Histogram({
      name: 'checkpoint_size_bytes',
      help: 'Encoded size of checkpoints written, in bytes.',
      buckets: SIZE_BUCKETS_BYTES,
      registers,
    }),
    storeErrors: new Counter({
      name: 'store_errors_total',
      help: 'Store errors that reached a caller after the retries (requests, sweepers and the queue alike), by store error code.',
      labelNames: ['code'] as const,
      registers,
    }),
    storeTransactions: new Counter({
      name: 'store_transactions_total',
      help: 'Store transactions run by the service (requests, streams, sweepers and the queue alike), each retry counted, by mode: read (a read-only snapshot) or write.',
      labelNames: ['mode'] as const,
      registers,
    }),
    dutyRuns: new Counter({
      name: 'duty_runs_total',
      help: 'Runs of a maintenance duty (lease-sweep, operation-sweep, maintenance, indexer) this instance did as the duty\'s holder; over a shared store one instance at a time holds each.',
      labelNames: ['duty'] as const,
      registers,
    }),
    dutyHeld: new Gauge({
      name: 'duty_held',
      help: 'Whether this instance holds the maintenance duty now (1) or another instance does (0).',
      labelNames: ['duty'] as const,
      registers,
    }),
    storeContention: new Counter({
      name: 'store_contention_total',
      help: 'Transactions that met a conflict (contention on one task), by outcome: committed after retrying, or gave_up at the deadline.',
      labelNames: ['outcome'] as const,
      registers,
    }),
    storeRetries: new Counter({
      name: 'store_retries_total',
      help: 'Store transactions tried again after a transient failure, by cause (unavailable, conflict, commit_unknown).',
      labelNames: ['code'] as const,
      registers,
    }),
    tasksBlocked: new Counter({
      name: 'tasks_blocked_total',
      help: 'Tasks the recovery circuit breaker (or an unrecoverable failure) blocked.',
      registers,
    }),
    leasesExpired: new Counter({
      name: 'leases_expired_total',
      help: 'Leases that ran out unrenewed and were ended by the sweeper (LEASE_EXPIRED, the crash signal).',
      registers,
    }),
    auditVerifications: new Counter({
      name: 'audit_verifications_total',
      help: 'Audit chain verifications, by result: ok, or broken.',
      labelNames: ['result'] as const,
      registers,
    }),
    queueDeadLetters: new Counter({
      name: 'queue_dead_letters_total',
      help: 'Queued writes that could no longer apply when replayed, moved to the dead-letter list.',
      registers,
    }),
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_ms',
      help: 'Time from receiving an HTTP request to finishing its answer, in milliseconds.',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: HTTP_DURATION_BUCKETS_MS,
      registers,
    }),
    queueDepth: new Gauge({
      name: 'queue_depth',
      help: 'Operations waiting in the local write queue for the store to come back.',
      registers,
    }),
    queueAgeSeconds: new Gauge({
      name: 'queue_age_seconds',
      help: 'Age of the oldest operation in the local write queue, in seconds; 0 when empty.',
      registers,
    }),
    indexerMerged: new Counter({
      name: 'indexer_merged_total',
      help: 'Checkpoints whose words this instance merged from the full-text pending list into the index.',
      registers,
    }),
    diskFreeBytes: new Gauge({
      name: 'disk_free_bytes',
      help: 'Bytes free for Baton on the file system of its data directory (directory="data", LMDB only) and of its write queue (directory="queue").',
      labelNames: ['directory'] as const,
      registers,
      collect() {
        for (const [role, dir] of disks) this.set({ directory: role }, space(dir).freeBytes);
      },
    }),
    diskSizeBytes: new Gauge({
      name: 'disk_size_bytes',
      help: 'Size in bytes of the file system of the data directory and of the write queue (see disk_free_bytes).',
      labelNames: ['directory'] as const,
      registers,
      collect() {
        for (const [role, dir] of disks) this.set({ directory: role }, space(dir).sizeBytes);
      },
    }),
    indexerPending: new Gauge({
      name: 'indexer_pending_entries',
      help: 'Over a shared store, the longest full-text pending list among the tenants this instance created checkpoints for in the last seconds, as it last read their counts (creates wait while one is past BATON_INDEXER_PENDING_BOUND); 0 over LMDB.',
      registers,
    }),
    indexerAdmissionWaits: new Counter({
      name: 'indexer_admission_waits_total',
      help: 'Creates through this instance that waited for the indexer to bring their tenant\'s full-text pending list back within BATON_INDEXER_PENDING_BOUND.',
      registers,
    }),
    indexerWriterHeld: new Histogram({
      name: 'indexer_writer_held_ms',
      help: 'Over LMDB, how long each merge of the full-text pending list held the store\'s single writer for its commit, in milliseconds: no create commits meanwhile, so a create can wait this long behind the indexer.',
      buckets: STORE_LATENCY_BUCKETS_MS,
      registers,
    }),
    indexerBacklog: new Gauge({
      name: 'indexer_backlog',
      help: 'Checkpoints created through this instance whose words are not merged into the full-text index yet, as far as it knows; counted by the instance holding the indexer duty only (0 elsewhere).',
      registers,
    }),
  };
  // Every series a dashboard or an alert reads exists from the start, at zero, so an absent series never hides a fault.
  metrics.auditVerifications.inc({ result: 'ok' }, 0);
  metrics.auditVerifications.inc({ result: 'broken' }, 0);
  for (const code of ['unavailable', 'timeout', 'conflict', 'commit_unknown', 'too_large', 'no_space', 'internal']) {
    metrics.storeErrors.inc({ code }, 0);
    metrics.storeRetries.inc({ code }, 0);
  }
  for (const stage of ['initiated', 'acknowledged']) metrics.handoffs.inc({ stage }, 0);
  metrics.handoffSuccessRate.set(1);
  // Until a write queue reports, it is empty.
  metrics.queueDepth.set(0);
  metrics.queueAgeSeconds.set(0);
  /** Reports the free space of `dir`'s disk as `disk_free_bytes{directory=role}`. */
  const watchDisk = (role: 'data' | 'queue', dir: string): void => {
    disks.set(role, dir);
  };
  return { ...metrics, watchDisk };
}

export type Metrics = ReturnType<typeof createMetrics>;
