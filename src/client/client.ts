/**
 * `BatonClient`: the typed client of Baton's HTTP API, one instance per
 * agent (it remembers the lease epochs that agent holds). Usable from plain
 * Node 20 or any runtime with `fetch`: it imports nothing of the server's.
 *
 * @module
 */
import { Checkpoints } from './checkpoints.js';
import { ClientCore } from './core.js';
import { Events } from './events.js';
import { Handoffs } from './handoffs.js';
import { LeaseBook } from './lease-book.js';
import { Leases } from './leases.js';
import { Recoveries } from './recoveries.js';
import { DEFAULT_BACKOFF, DEFAULT_RETRIES, type BackoffPolicy } from './retry.js';
import { Tasks } from './tasks.js';
import { Transport, type Fetch } from './transport.js';

export interface BatonClientOptions {
  /** Where the service listens, e.g. `http://127.0.0.1:7070` (a path prefix is kept). */
  baseUrl: string;
  /** The bearer token, or a function giving the current one (called for every attempt). */
  token?: string | (() => string | Promise<string>);
  /** The `fetch` to use; the global one by default. */
  fetch?: Fetch;
  /** Retries after the first attempt on network errors, 429 and 5xx (default 3; 0 disables them). */
  retries?: number;
  /** Waits between retries: full jitter under `baseMs · 2^attempt`, at most `maxMs`; Retry-After is honoured up to `maxRetryAfterMs`. */
  backoff?: Partial<BackoffPolicy>;
  /** The time limit of one attempt, answer body included (ms, default 30 s); a timed-out attempt is retried. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class BatonClient {
  readonly checkpoints: Checkpoints;
  readonly tasks: Tasks;
  readonly handoffs: Handoffs;
  readonly leases: Leases;
  readonly recoveries: Recoveries;
  readonly events: Events;
  private readonly book = new LeaseBook();

  constructor(options: BatonClientOptions) {
    if (!/^https?:\/\//i.test(options.baseUrl)) throw new TypeError('baseUrl must be an http:// or https:// URL.');
    const retries = options.retries ?? DEFAULT_RETRIES;
    if (!Number.isInteger(retries) || retries < 0) throw new TypeError('retries must be a non-negative integer.');
    const backoff: BackoffPolicy = { ...DEFAULT_BACKOFF, ...options.backoff };
    const fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const transport = new Transport({
      baseUrl: options.baseUrl,
      ...(options.token !== undefined ? { token: options.token } : {}),
      fetch,
      retries,
      backoff,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    });
    const core = new ClientCore(transport, this.book);
    this.checkpoints = new Checkpoints(core);
    this.tasks = new Tasks(core);
    this.handoffs = new Handoffs(core);
    this.leases = new Leases(core);
    this.recoveries = new Recoveries(core);
    this.events = new Events(core, fetch, backoff);
  }

  /** The lease epoch this client sends on writes to `taskId`, if it holds one. */
  leaseEpoch(taskId: string): number | undefined {
    return this.book.epoch(taskId);
  }
}
