/**
 * The service's configuration: one zod schema, and the only reader of
 * `process.env`. Every setting, its default and its meaning is listed in
 * `docs/configuration.md`.
 *
 * @module
 */
import { z } from 'zod';
import { STORE_LIMITS } from './store/store.js';

const port = z.coerce.number().int().min(0).max(65_535);

/**
 * The largest checkpoint limit that may be configured. An update writes the
 * new version and keeps the old one as a revision in one transaction, so two
 * copies, with the index entries, audit entry, event and operation record
 * beside them, must stay within the store's 10,000,000 bytes per transaction.
 */
export const MAX_CONFIGURABLE_CHECKPOINT_BYTES = 4 * 1024 * 1024;
const CHECKPOINT_LIMIT_MESSAGE = `must be at most ${MAX_CONFIGURABLE_CHECKPOINT_BYTES} (4 MiB), because an update writes a checkpoint and its previous version in one transaction of at most ${STORE_LIMITS.transactionBytes} bytes`;

export const configSchema = z.object({
  store: z.enum(['lmdb', 'fdb']).default('lmdb'),
  dataDir: z.string().min(1).default('./data'),
  fdbClusterFile: z.string().min(1).optional(),
  /** A key prefix under which the FoundationDB store keeps everything (tests scope runs with it). */
  fdbPrefix: z.string().default(''),
  port: port.default(7070),
  host: z.string().min(1).default('127.0.0.1'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `role:token[:tenant]` entries, comma-separated. */
  tokens: z.string().default(''),
  /** A file of `role:sha256hex[:tenant]` lines. */
  tokensFile: z.string().min(1).optional(),
  auth: z.enum(['enabled', 'disabled']).default('enabled'),
  metricsToken: z.string().min(1).optional(),
  /** The largest encoded checkpoint accepted; request bodies may be this large. */
  maxCheckpointBytes: z.coerce.number().int().min(1024).max(MAX_CONFIGURABLE_CHECKPOINT_BYTES, { message: CHECKPOINT_LIMIT_MESSAGE }).default(1024 * 1024),
  /** An Ed25519 private key (PKCS#8 PEM) that signs finalizations. */
  signingKeyFile: z.string().min(1).optional(),
  /** Requests per minute allowed to one token. */
  rateLimitPerMinute: z.coerce.number().int().min(1).default(1_000_000),
  /** How often expired leases are looked for (ms); LEASE_EXPIRED is announced within about this long. */
  leaseSweepMs: z.coerce.number().int().min(10).max(60_000).default(1_000),
  /** Recoveries allowed per task within the window; one more blocks the task. */
  recoveryMaxAttempts: z.coerce.number().int().min(1).max(1_000).default(3),
  recoveryWindowMs: z.coerce.number().int().min(1_000).default(60 * 60 * 1000),
  /** How long operation records (Idempotency-Keys and minted operation ids) are kept (ms); a key reused later is a new operation. */
  operationRetentionMs: z.coerce.number().int().min(60_000).max(365 * 24 * 60 * 60 * 1000).default(24 * 60 * 60 * 1000),
  /** How often operation records past their retention are looked for (ms). */
  operationSweepMs: z.coerce.number().int().min(10).max(24 * 60 * 60 * 1000).default(60_000),
  /** The durable local write queue's directory; by default `queue` inside the data directory. */
  queueDir: z.string().min(1).optional(),
  /** The most bytes the write queue holds; full is 503 queue_full. 0 turns the queue off (writes answer 503 while the store is down). */
  queueMaxBytes: z.coerce.number().int().min(0).default(64 * 1024 * 1024),
  /** How often the queue checks whether the store is back (ms). */
  queueReplayMs: z.coerce.number().int().min(10).max(60_000).default(500),
  /** `production` refuses fault injection unless `allowFaults`. */
  nodeEnv: z.string().default('development'),
  allowFaults: z.enum(['0', '1']).default('0'),
  /** Whether writers, not only admins, may purge a task (`DELETE /v1/tasks/:taskId`). */
  writerPurge: z.enum(['0', '1']).default('0'),
});

export type Config = z.infer<typeof configSchema>;

/** Reads the configuration from environment variables; throws one sentence per bad setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse({
    store: env.BATON_STORE || undefined,
    dataDir: env.BATON_DATA_DIR || undefined,
    fdbClusterFile: env.FDB_CLUSTER_FILE || undefined,
    fdbPrefix: env.BATON_FDB_PREFIX || undefined,
    port: env.PORT || undefined,
    host: env.HOST || undefined,
    logLevel: env.LOG_LEVEL || undefined,
    tokens: env.BATON_TOKENS || undefined,
    tokensFile: env.BATON_TOKENS_FILE || undefined,
    auth: env.BATON_AUTH || undefined,
    metricsToken: env.BATON_METRICS_TOKEN || undefined,
    maxCheckpointBytes: env.BATON_MAX_CHECKPOINT_BYTES || undefined,
    rateLimitPerMinute: env.BATON_RATE_LIMIT_PER_MINUTE || undefined,
    signingKeyFile: env.BATON_SIGNING_KEY_FILE || undefined,
    leaseSweepMs: env.BATON_LEASE_SWEEP_MS || undefined,
    recoveryMaxAttempts: env.BATON_RECOVERY_MAX_ATTEMPTS || undefined,
    recoveryWindowMs: env.BATON_RECOVERY_WINDOW_MS || undefined,
    operationRetentionMs: env.BATON_OPERATION_RETENTION_MS || undefined,
    operationSweepMs: env.BATON_OPERATION_SWEEP_MS || undefined,
    queueDir: env.BATON_QUEUE_DIR || undefined,
    queueMaxBytes: env.BATON_QUEUE_MAX_BYTES || undefined,
    queueReplayMs: env.BATON_QUEUE_REPLAY_MS || undefined,
    nodeEnv: env.NODE_ENV || undefined,
    allowFaults: env.BATON_ALLOW_FAULTS || undefined,
    writerPurge: env.BATON_WRITER_PURGE || undefined,
  });
  if (!parsed.success) {
    const names: Record<string, string> = {
      store: 'BATON_STORE',
      dataDir: 'BATON_DATA_DIR',
      fdbClusterFile: 'FDB_CLUSTER_FILE',
      fdbPrefix: 'BATON_FDB_PREFIX',
      port: 'PORT',
      host: 'HOST',
      logLevel: 'LOG_LEVEL',
      tokens: 'BATON_TOKENS',
      tokensFile: 'BATON_TOKENS_FILE',
      auth: 'BATON_AUTH',
      metricsToken: 'BATON_METRICS_TOKEN',
      maxCheckpointBytes: 'BATON_MAX_CHECKPOINT_BYTES',
      rateLimitPerMinute: 'BATON_RATE_LIMIT_PER_MINUTE',
      signingKeyFile: 'BATON_SIGNING_KEY_FILE',
      leaseSweepMs: 'BATON_LEASE_SWEEP_MS',
      recoveryMaxAttempts: 'BATON_RECOVERY_MAX_ATTEMPTS',
      recoveryWindowMs: 'BATON_RECOVERY_WINDOW_MS',
      operationRetentionMs: 'BATON_OPERATION_RETENTION_MS',
      operationSweepMs: 'BATON_OPERATION_SWEEP_MS',
      queueDir: 'BATON_QUEUE_DIR',
      queueMaxBytes: 'BATON_QUEUE_MAX_BYTES',
      queueReplayMs: 'BATON_QUEUE_REPLAY_MS',
      nodeEnv: 'NODE_ENV',
      allowFaults: 'BATON_ALLOW_FAULTS',
    };
    const lines = parsed.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? '');
      return `${names[field] ?? field}: ${issue.message}`;
    });
    // One sentence, however many settings are wrong.
    throw new ConfigError(`The configuration is invalid: ${lines.join('; ')}.`);
  }
  return parsed.data;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}
