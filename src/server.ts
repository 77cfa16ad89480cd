/**
 * Running the service: read the configuration, open the store, the runtime
 * and the app, listen, and close gracefully on SIGINT or SIGTERM, or when the
 * process that started it exits: stop listening, let requests in flight
 * finish, replay the write queue until its journal is empty or the grace
 * period (`BATON_SHUTDOWN_GRACE_MS`, counted from the signal) ends, then
 * close. `main.ts` (`npm start`) and `baton serve` both run `serve`.
 *
 * @module
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { startTracing } from './telemetry/tracing.js';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { DirectoryInUseError } from './fs/dir-lock.js';
import { LOG_REDACT_PATHS } from './http/plugins/auth.js';
import { openRuntime } from './service/runtime.js';
import { openStore } from './store/open.js';
import { StoreError } from './store/store.js';
import { putEventLoopFirst } from './threads/priority.js';

/** The service's logger: JSON lines, secrets redacted (a traced request's lines carry its trace ids: `http/plugins/tracing.ts`); to stdout unless told otherwise. */
export function serviceLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: LOG_REDACT_PATHS };
  return destination === undefined ? pino(options) : pino(options, destination);
}

let logger: Logger = serviceLogger('info');

/** How long a shutdown waits for requests in flight before it closes their connections (at most the grace period). */
const DRAIN_MS = 10_000;

/** How often the server checks that the process that started it is still there. */
const PARENT_POLL_MS = 250;

/** The command-line flag that exposes POST /v1/admin/faults; never on by default. */
const FAULT_FLAG = '--enable-fault-injection';

/** Runs the service until it is told to stop; `argv` holds the command-line flags (`--enable-fault-injection`). */
export async function serve(argv: readonly string[] = process.argv): Promise<void> {
  // Tracing starts before anything it traces (configured by the OTEL_* variables only).
  const stopTracing = await startTracing();
  const config = loadConfig();
  logger = serviceLogger(config.logLevel);
  const faultInjection = argv.includes(FAULT_FLAG);
  if (faultInjection && config.nodeEnv === 'production' && config.allowFaults !== '1') {
    throw new ConfigError(`${FAULT_FLAG} is refused with NODE_ENV=production; set BATON_ALLOW_FAULTS=1 as well to rehearse an outage in production.`);
  }
  if (faultInjection) logger.warn({}, 'fault injection is enabled: admins can make the store unavailable through POST /v1/admin/faults');
  // Before the store opens: FoundationDB's network thread, which every request's reads and commits go through, keeps the event loop's priority.
  await putEventLoopFirst(config.helperNice);
  const store = await openStore(config);
  const runtime = await openRuntime(config, { store, log: logger, faultInjection });
  const app = await buildApp({ runtime, logger });
  runtime.start();
  await app.listen({ port: config.port, host: config.host });

  let closing = false;
  const close = async (reason: string): Promise<void> => {
    if (closing) return;
    closing = true;
    const signalled = performance.now();
    logger.info({ reason }, 'shutting down');
    // app.close() stops listening and lets requests in flight finish, but a
    // keep-alive connection that goes idle after it began stays open until
    // its timeout: close such connections as they go idle, and all of them
    // once the drain time is up.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => app.server.closeAllConnections(), Math.min(DRAIN_MS, config.shutdownGraceMs));
    await app.close();
    clearInterval(sweep);
    clearTimeout(deadline);
    // No request comes in any more: the queued writes replay while the grace period lasts, and what is left stays in the journal.
    await runtime.drainQueue(Math.max(0, config.shutdownGraceMs - (performance.now() - signalled)));
    // The replayer has finished the writes it was applying before the queue and then the store close.
    await runtime.close();
    await store.close();
    await stopTracing();
    logger.info('shut down');
    process.exit(0);
  };
  process.on('SIGINT', () => void close('SIGINT'));
  process.on('SIGTERM', () => void close('SIGTERM'));

  // `npm start` runs the server under npm and a shell; stopping npm by its pid
  // must not leave the server holding the port. An orphan is adopted by init
  // or a subreaper, so a changed parent pid means the parent is gone. A server
  // started by init itself (pid 1, as in a container) has no parent to lose.
  const parent = process.ppid;
  if (parent > 1) {
    setInterval(() => {
      if (process.ppid !== parent) void close('parent exited');
    }, PARENT_POLL_MS).unref();
  }
}

/** Serves, and ends the process with one sentence (a configuration problem) or a logged failure when it cannot. */
export function serveOrExit(argv: readonly string[] = process.argv): void {
  serve(argv).catch((error: unknown) => {
    // Configuration and store problems are the operator's to fix: one sentence, no stack.
    if (error instanceof ConfigError || error instanceof DirectoryInUseError || (error instanceof StoreError && error.code === 'not_configured')) {
      console.error(error.message);
    } else {
      logger.fatal({ err: error }, 'the service could not start');
    }
    process.exit(1);
  });
}
