/**
 * The service's configuration: one zod schema, and the only reader of
 * `process.env`. Each setting is declared once, in its group (store, server,
 * auth, limits, protocol, queue, operations, faults), with the environment
 * variable it is read from; `docs/configuration.md` lists them all, and a
 * test keeps that page and this table equal.
 *
 * @module
 */
import { z } from 'zod';
import { STORE_LIMITS } from './store/store.js';

const port = z.coerce.number().int().min(0).max(65_535);
const isoDurationSetting = z.string().regex(/^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/, 'must be an ISO 8601 duration such as P30D');
const ms = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * The largest checkpoint limit that may be configured. An update writes the
 * new version and keeps the old one as a revision in one transaction, so two
 * copies, with the index entries, audit entry, event and operation record
 * beside them, must stay within the store's 10,000,000 bytes per transaction.
 */
export const MAX_CONFIGURABLE_CHECKPOINT_BYTES = 4 * 1024 * 1024;
const CHECKPOINT_LIMIT_MESSAGE = `must be at most ${MAX_CONFIGURABLE_CHECKPOINT_BYTES} (4 MiB), because an update writes a checkpoint and its previous version in one transaction of at most ${STORE_LIMITS.transactionBytes} bytes`;

/** A setting: the environment variable it is read from, and its schema (with its default). */
interface Setting<S extends z.ZodType = z.ZodType> {
  env: string;
  schema: S;
}
const setting = <S extends z.ZodType>(env: string, schema: S): Setting<S> => ({ env, schema });

/** Where data lives: the store and its location. */
const storeSettings = {
  store: setting('BATON_STORE', z.enum(['lmdb', 'fdb']).default('lmdb')),
  dataDir: setting('BATON_DATA_DIR', z.string().min(1).default('./data')),
  fdbClusterFile: setting('FDB_CLUSTER_FILE', z.string().min(1).optional()),
  /** A key prefix under which the FoundationDB store keeps everything (tests scope runs with it). */
  fdbPrefix: setting('BATON_FDB_PREFIX', z.string().default('')),
  /** How long a write keeps retrying store conflicts (contention on one task) before it answers 503 task_contended (ms). */
  transactionDeadlineMs: setting('BATON_TRANSACTION_DEADLINE_MS', ms(100, 60_000).default(5_000)),
  /** Whether one process's writes to one task take turns before their transactions: `auto` is on for FoundationDB, off for LMDB. */
  taskLanes: setting('BATON_TASK_LANES', z.enum(['auto', 'on', 'off']).default('auto')),
  /** LMDB: how long a commit may wait for other write transactions under way to share it (ms); 0 commits each at once. */
  commitWindowMs: setting('BATON_COMMIT_WINDOW_MS', ms(0, 100).default(4)),
  /** LMDB: whether the word runs the indexer's merges open are kept in an environment of their own (`runs/` in the data directory), whose commits neither queue before nor fsync with the creates'. */
  wordRunsApart: setting('BATON_WORD_RUNS_APART', z.enum(['on', 'off']).default('on')),
};

/** The HTTP server. */
const serverSettings = {
  port: setting('PORT', port.default(7070)),
  host: setting('HOST', z.string().min(1).default('127.0.0.1')),
  logLevel: setting('LOG_LEVEL', z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')),
  /** `production` refuses fault injection unless `allowFaults`. */
  nodeEnv: setting('NODE_ENV', z.string().default('development')),
  /** How long a stop may take from SIGTERM (ms): requests in flight finish, then the write queue replays until its journal is empty or this runs out. */
  shutdownGraceMs: setting('BATON_SHUTDOWN_GRACE_MS', ms(0, 3_600_000).default(25_000)),
  /** The nice value every thread but the event loop runs at, at least (`threads/priority.ts`); 0 leaves them all at the process's priority. */
  helperNice: setting('BATON_HELPER_NICE', z.coerce.number().int().min(0).max(19).default(10)),
};

/** Who may call: tokens, roles, tenants. */
const authSettings = {
  /** `role:token[:tenant]` entries, comma-separated. */
  tokens: setting('BATON_TOKENS', z.string().default('')),
  /** A file of `role:sha256hex[:tenant]` lines. */
  tokensFile: setting('BATON_TOKENS_FILE', z.string().min(1).optional()),
  auth: setting('BATON_AUTH', z.enum(['enabled', 'disabled']).default('enabled')),
  metricsToken: setting('BATON_METRICS_TOKEN', z.string().min(1).optional()),
  /** Requests per minute allowed to one token. */
  rateLimitPerMinute: setting('BATON_RATE_LIMIT_PER_MINUTE', z.coerce.number().int().min(1).default(1_000_000)),
  /** Whether writers, not only admins, may purge a task (`DELETE /v1/tasks/:taskId`). */
  writerPurge: setting('BATON_WRITER_PURGE', z.enum(['0', '1']).default('0')),
  /** Where the keys that sign JWTs are published (a JWKS); JWTs are accepted beside static tokens when set. */
  jwksUrl: setting('BATON_JWKS_URL', z.url({ message: 'must be a URL, e.g. https://issuer.example/.well-known/jwks.json' }).optional()),
  jwtIssuer: setting('BATON_JWT_ISSUER', z.string().min(1).optional()),
  jwtAudience: setting('BATON_JWT_AUDIENCE', z.string().min(1).optional()),
  /** The least time between two fetches of the JWKS for a key it does not hold yet (ms). */
  jwksCooldownMs: setting('BATON_JWKS_COOLDOWN_MS', ms(0, 3_600_000).default(30_000)),
};

/** HTTPS, and client certificates. */
const tlsSettings = {
  /** A PEM certificate (chain): with the key, the server speaks HTTPS only. */
  tlsCertFile: setting('BATON_TLS_CERT_FILE', z.string().min(1).optional()),
  tlsKeyFile: setting('BATON_TLS_KEY_FILE', z.string().min(1).optional()),
  /** PEM CA certificates: clients must present a certificate they signed (mutual TLS). */
  tlsCaFile: setting('BATON_TLS_CA_FILE', z.string().min(1).optional()),
};

/** What a checkpoint may be, and what signs it. */
const checkpointSettings = {
  /** The largest encoded checkpoint accepted; request bodies may be this large. */
  maxCheckpointBytes: setting(
    'BATON_MAX_CHECKPOINT_BYTES',
    z.coerce.number().int().min(1024).max(MAX_CONFIGURABLE_CHECKPOINT_BYTES, { message: CHECKPOINT_LIMIT_MESSAGE }).default(1024 * 1024),
  ),
  /** An Ed25519 private key (PKCS#8 PEM) that signs finalizations. */
  signingKeyFile: setting('BATON_SIGNING_KEY_FILE', z.string().min(1).optional()),
  /** Lines `KEY_ID:BASE64_OF_32_BYTES[:TENANT]`: encryption at rest of every stored value and queued write (`docs/encryption.md`). */
  encryptionKeyFile: setting('BATON_ENCRYPTION_KEY_FILE', z.string().min(1).optional()),
};

/** The handoff and recovery protocol. */
const protocolSettings = {
  /** How often expired leases are looked for (ms); LEASE_EXPIRED is announced within about this long. */
  leaseSweepMs: setting('BATON_LEASE_SWEEP_MS', ms(10, 60_000).default(1_000)),
  /** How far instances' clocks may disagree (ms): a lease is taken from its holder only this long after its expiry. */
  clockSkewMs: setting('BATON_CLOCK_SKEW_MS', ms(0, 60_000).default(500)),
  /** How long an instance holds a maintenance duty (a sweeper) unrenewed over a shared store; another takes it over this long (plus the skew) after its holder dies. */
  dutyTtlMs: setting('BATON_DUTY_TTL_MS', ms(100, 600_000).default(10_000)),
  /**
   * Whether this instance merges the full-text pending list into the index
   * (`docs/search.md`): `off` leaves it to other instances of a fleet (or,
   * over LMDB, to the next start with it `on`); search stays complete either
   * way, and slower once the list passes its bound.
   */
  indexer: setting('BATON_INDEXER', z.enum(['on', 'off']).default('on')),
  /** How long a create's words wait in the pending list before a merge starts (ms): longer gathers larger batches. */
  indexerDelayMs: setting('BATON_INDEXER_DELAY_MS', ms(0, 60_000).default(500)),
  /**
   * Entries a tenant's full-text pending list may hold before creates wait
   * for the merge: over FoundationDB every instance's creates, over LMDB
   * the process's own. At most the 2,000 a search reads beside the runs
   * (`PENDING_LIMIT`); lower keeps searches faster, higher lets bursts of
   * creates through without waiting.
   */
  indexerPendingBound: setting('BATON_INDEXER_PENDING_BOUND', z.coerce.number().int().min(1).max(2_000).default(1_000)),
  /** Recoveries allowed per task within the window; one more blocks the task. */
  recoveryMaxAttempts: setting('BATON_RECOVERY_MAX_ATTEMPTS', z.coerce.number().int().min(1).max(1_000).default(3)),
  recoveryWindowMs: setting('BATON_RECOVERY_WINDOW_MS', z.coerce.number().int().min(1_000).default(60 * 60 * 1000)),
};

/** The durable local write queue. */
const queueSettings = {
  /** The queue's directory; by default `queue` inside the data directory. */
  queueDir: setting('BATON_QUEUE_DIR', z.string().min(1).optional()),
  /** The most bytes the queue holds; full is 503 queue_full. 0 turns the queue off (writes answer 503 while the store is down). */
  queueMaxBytes: setting('BATON_QUEUE_MAX_BYTES', z.coerce.number().int().min(0).default(64 * 1024 * 1024)),
  /** How often the queue checks whether the store is back (ms). */
  queueReplayMs: setting('BATON_QUEUE_REPLAY_MS', ms(10, 60_000).default(500)),
};

/** Operation records (Idempotency-Keys and minted operation ids). */
const operationSettings = {
  /** How long operation records are kept (ms); a key reused later is a new operation. */
  operationRetentionMs: setting('BATON_OPERATION_RETENTION_MS', ms(60_000, 365 * 24 * 60 * 60 * 1000).default(24 * 60 * 60 * 1000)),
  /** How often operation records past their retention are looked for (ms). */
  operationSweepMs: setting('BATON_OPERATION_SWEEP_MS', ms(10, 24 * 60 * 60 * 1000).default(60_000)),
};

/** Keeping and letting go: the tenant defaults under each task's own policy (`docs/retention.md`). */
const retentionSettings = {
  defaultRetention: setting('BATON_DEFAULT_RETENTION', isoDurationSetting.optional()),
  defaultExpireAfter: setting('BATON_DEFAULT_EXPIRE_AFTER', isoDurationSetting.optional()),
  defaultKeepLast: setting('BATON_DEFAULT_KEEP_LAST', z.coerce.number().int().min(1).max(1_000_000).optional()),
  /** How often tasks past their `expireAfter`, and purges left unfinished, are looked for (ms). */
  retentionSweepMs: setting('BATON_RETENTION_SWEEP_MS', ms(10, 24 * 60 * 60 * 1000).default(60_000)),
  /** How long events are kept in the outbox (ms); older ones are trimmed by the maintenance runner. */
  eventRetentionMs: setting('BATON_EVENT_RETENTION_MS', ms(1_000, 10 * 365 * 24 * 60 * 60 * 1000).default(7 * 24 * 60 * 60 * 1000)),
  /** How long `DELETE /v1/tasks/:taskId` goes on purging before it answers 202 and leaves the rest to the maintenance runner (ms). */
  purgeWaitMs: setting('BATON_PURGE_WAIT_MS', ms(0, 60_000).default(2_000)),
};

/** Rehearsing outages. */
const faultSettings = {
  allowFaults: setting('BATON_ALLOW_FAULTS', z.enum(['0', '1']).default('0')),
};

/** Every setting, by group; a group is where a new setting finds its home. */
export const SETTINGS = {
  store: storeSettings,
  server: serverSettings,
  auth: authSettings,
  tls: tlsSettings,
  checkpoint: checkpointSettings,
  protocol: protocolSettings,
  queue: queueSettings,
  operations: operationSettings,
  retention: retentionSettings,
  faults: faultSettings,
} as const;

type Groups = typeof SETTINGS;
type AllSettings = { [G in keyof Groups]: Groups[G] }[keyof Groups];
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type Flat = UnionToIntersection<AllSettings>;
type Shape = { [K in keyof Flat]: Flat[K] extends Setting<infer S> ? S : never };

const flat = Object.assign({}, ...Object.values(SETTINGS)) as Record<string, Setting>;

export const configSchema = z.object(Object.fromEntries(Object.entries(flat).map(([name, { schema }]) => [name, schema])) as Shape);

export type Config = z.infer<typeof configSchema>;

/** Every environment variable the service reads, by setting. */
export const ENV_NAMES: Readonly<Record<keyof Config, string>> = Object.fromEntries(Object.entries(flat).map(([name, { env }]) => [name, env])) as Record<keyof Config, string>;

/** Reads the configuration from environment variables; throws one sentence naming every bad setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable counts as unset, as shells make it easy to export one by accident.
  const raw = Object.fromEntries(Object.entries(ENV_NAMES).map(([name, variable]) => [name, env[variable] || undefined]));
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? '');
      return `${ENV_NAMES[field as keyof Config] ?? field}: ${issue.message}`;
    });
    throw new ConfigError(`The configuration is invalid: ${lines.join('; ')}.`);
  }
  return parsed.data;
}

/** A configuration problem: one sentence for the operator, printed without a stack. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
