/**
 * The baseline of the HTTP benchmark (`http-bench.ts`): a bare Fastify server
 * with the routes of a checkpoint create and read, taking and returning the
 * same JSON payloads as Baton, with Baton's body limit and log level, and
 * nothing behind them (no validation, no auth, no store, no hashing).
 *
 *   POST /v1/checkpoints       parses the JSON body, keeps a reference to it
 *                              and answers 201 with it
 *   GET  /v1/checkpoints/:id   answers 200 with the last body POSTed (so the
 *                              benchmark POSTs a real Baton checkpoint first
 *                              to give the GET the same response payload)
 *
 *   POST /floor/checkpoints    (with BARE_FLOOR_DIR) the least any durable
 *                              checkpoint create does: the same JSON parse,
 *                              the same validation (the compiled check, then
 *                              zod), RFC 8785
 *                              canonicalization and SHA-256 as Baton, and one
 *                              LMDB put in BARE_FLOOR_DIR opened as Baton opens
 *                              its store (every commit fsynced; puts of one
 *                              event turn share a commit), answered 201 once
 *                              durable. No auth, no task head, no audit chain,
 *                              no events, no indexes: the floor under Baton's
 *                              create on this machine, measured in the same run.
 *
 *   POST /floor-fdb/checkpoints (with BARE_FDB_PREFIX and FDB_CLUSTER_FILE) the
 *                              same floor over FoundationDB: the parse,
 *                              validation, canonical JSON and SHA-256, then
 *                              one transaction setting the hashed document
 *                              under BARE_FDB_PREFIX (the store Baton uses,
 *                              `FdbStore`), answered 201 once committed.
 *
 * Environment: PORT (default 0), HOST (default 127.0.0.1), BARE_BODY_LIMIT
 * (bytes; the benchmark passes Baton's), LOG_LEVEL (default warn),
 * BARE_PROCESSES (default 1: with more, that many processes of the server
 * share the port through node:cluster, and the floor route's LMDB
 * environment, which LMDB lets several processes write; `cores-bench.ts`).
 * Prints `Server listening at <url>` on stdout once it listens (every
 * process), whatever the log level, and closes on SIGINT/SIGTERM.
 *
 * @module
 */
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { open } from 'lmdb';
import { parseCheckpointInput } from '../src/http/compiled-validation.js';
import { canonicalJson, sha256Hex } from '../src/domain/hash.js';

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
const bodyLimit = Number(process.env.BARE_BODY_LIMIT ?? 2 * 1024 * 1024);
const level = process.env.LOG_LEVEL ?? 'warn';

const processes = Math.max(1, Number(process.env.BARE_PROCESSES ?? 1));
let closing = false;

/** The routes, listening; in each process when there are several. */
async function serve(): Promise<void> {
  const app = Fastify({ bodyLimit, logger: { level } });

  let latest: unknown = { ok: true };

  app.post('/v1/checkpoints', async (request, reply) => {
    latest = request.body;
    return reply.code(201).send(request.body);
  });

  app.get('/v1/checkpoints/:id', async () => latest);

  /** A floor route: the parse, validation, canonical JSON and SHA-256 of a create, then `put` of the hashed document. */
  const floor = (path: string, put: (key: Buffer, value: Buffer) => Promise<unknown>): void => {
    app.post(path, async (request, reply) => {
      const parsed = parseCheckpointInput(request.body);
      if (!parsed.success) return reply.code(400).send({ errors: parsed.error.issues.length });
      const id = randomUUID();
      const canonical = canonicalJson({ ...parsed.data, id, version: 1, createdAt: new Date().toISOString() });
      const hash = sha256Hex(canonical);
      await put(Buffer.from(id), Buffer.from(canonical));
      return reply.code(201).send({ id, hash, ...parsed.data });
    });
  };

  const floorDir = process.env.BARE_FLOOR_DIR;
  if (floorDir) {
    const db = open({ path: floorDir, noSubdir: false, overlappingSync: false, noSync: false, compression: false, encoding: 'binary', keyEncoding: 'binary' });
    floor('/floor/checkpoints', (key, value) => db.put(key, value));
  }

  const fdbPrefix = process.env.BARE_FDB_PREFIX;
  if (fdbPrefix && process.env.FDB_CLUSTER_FILE) {
    const { FdbStore } = await import('../src/store/fdb.js');
    const store = await FdbStore.open({ clusterFile: process.env.FDB_CLUSTER_FILE, prefix: fdbPrefix });
    floor('/floor-fdb/checkpoints', (key, value) => store.transact(async (tx) => tx.set(key, value)));
  }

  const address = await app.listen({ port, host });
  if (processes === 1) console.log(`Server listening at ${address}`);

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      void app.close().then(() => process.exit(0));
    });
  }
}

/** Several processes: this one serves nothing, starts them, and reports the port once every one listens. */
function startProcesses(): void {
  let listening = 0;
  cluster.on('listening', (_, address) => {
    if (++listening === processes) console.log(`Server listening at http://${host}:${address.port}`);
  });
  cluster.on('exit', (_, code, signal) => {
    if (Object.keys(cluster.workers ?? {}).length === 0 && closing) process.exit(0);
    if (closing) return;
    console.error(`a server process exited (${code ?? signal}): stopping`);
    process.exit(1);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.kill(signal);
    });
  }
  for (let i = 0; i < processes; i++) cluster.fork();
}

if (processes > 1 && cluster.isPrimary) startProcesses();
else await serve();
