/**
 * The closed-loop scenarios of the HTTP benchmark, driven by autocannon: a
 * fixed number of connections, each sending its next request as soon as the
 * previous one is answered, for a discarded warm-up and then the measured run.
 * Also the request builders of the create, get and history scenarios (the
 * patch scenario has its own file: it keeps state between requests).
 *
 * @module
 */
import autocannon from 'autocannon';
import { CONNECTIONS, HISTORY_LIMIT, HISTORY_TASKS, SECONDS, WARMUP_SECONDS } from './http-config.js';
import { jsonHeaders } from './http-client.js';
import { historyTaskId, taskId, uniqueCheckpointBody, useBodyStream } from './http-payloads.js';
import { cpuMeter, type Cpu } from './proc.js';
import { assertAlive, type Server } from './servers.js';
import { latencyOf, OVER_LIMIT_MS, round, withOverLimit, type Latency } from './stats.js';

/**
 * Latency (p50, p99, max) over every request of the measured run: each
 * response at its own latency, each error or timeout as `OVER_LIMIT_MS`
 * (`stats.ts`), as the open loop counts them.
 */
export interface ClosedFigures extends Latency {
  connections: number;
  seconds: number;
  /** Requests answered (any status). */
  requests: number;
  /** Answered requests per second. */
  reqPerSec: number;
  okPerSec: number;
  ok: number;
  non2xx: number;
  /** Requests without an answer: connection errors and timeouts (autocannon counts timeouts among its errors). */
  errors: number;
  /** Of `errors`, those that timed out. */
  timeouts: number;
  statusCodes: Record<string, number>;
  cpu: Cpu;
  extra?: Record<string, number>;
}

export type Requests = autocannon.Request[];

function cannon(url: string, requests: Requests, connections: number, seconds: number, onLatency?: (ms: number) => void): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, connections, duration: seconds, requests, headers: jsonHeaders as Record<string, string>, timeout: OVER_LIMIT_MS / 1000 },
      (error: unknown, result: autocannon.Result) => (error ? reject(error) : resolve(result)),
    );
    if (onLatency) instance.on('response', (_client, _status, _bytes, ms) => onLatency(ms));
  });
}

/**
 * Warm-up (discarded), then the measured run. `requests()` is called for each
 * run; `before()` runs before each (e.g. to resynchronise state the warm-up
 * left behind). Latency is recorded per response in ms (float) from
 * autocannon's own timer, over every status; a request that errored or
 * timed out has no latency of its own and counts as `OVER_LIMIT_MS`.
 */
export async function closedLoop(
  server: Server,
  requests: () => Requests,
  connections = CONNECTIONS,
  before?: () => Promise<void>,
  measuredSeconds = SECONDS,
): Promise<ClosedFigures> {
  useBodyStream(server.url);
  await before?.();
  await cannon(server.url, requests(), connections, WARMUP_SECONDS);
  assertAlive(server);
  await before?.();
  const samples: number[] = [];
  // The server and any processes below it (the bare server's floor in several processes).
  const meter = cpuMeter(server.child.pid, true);
  const result = await cannon(server.url, requests(), connections, measuredSeconds, (ms) => samples.push(ms));
  const cpu = meter(samples.length);
  assertAlive(server);
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = count ?? 0;
  const seconds = result.duration;
  return {
    connections,
    seconds,
    requests: samples.length,
    reqPerSec: round(samples.length / seconds, 1),
    okPerSec: round(result['2xx'] / seconds, 1),
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    ...latencyOf(withOverLimit(samples, result.errors)),
    cpu,
  };
}

/** One server's share of a closed loop over several: its requests and its connections. */
export interface Target {
  server: Server;
  requests: () => Requests;
  connections: number;
}

/**
 * A closed loop over several servers at once (instances of a fleet behind a
 * balancer the benchmark plays): each target's connections send its
 * requests, warm-up and measured run side by side; the figures are over
 * every request, the server CPU summed over the servers.
 */
export async function closedLoopAcross(targets: Target[]): Promise<ClosedFigures> {
  // One store behind every target: its tasks' texts go on as one stream, named by the first instance (as `openLoop` names it).
  useBodyStream(targets[0]!.server.url);
  await Promise.all(targets.map((t) => cannon(t.server.url, t.requests(), t.connections, WARMUP_SECONDS)));
  for (const t of targets) assertAlive(t.server);
  const samples: number[] = [];
  const meters = targets.map((t) => cpuMeter(t.server.child.pid, true));
  const results = await Promise.all(targets.map((t) => cannon(t.server.url, t.requests(), t.connections, SECONDS, (ms) => samples.push(ms))));
  const cpus = meters.map((meter) => meter(samples.length));
  for (const t of targets) assertAlive(t.server);
  const statusCodes: Record<string, number> = {};
  for (const result of results) {
    for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = (statusCodes[code] ?? 0) + (count ?? 0);
  }
  const seconds = Math.max(...results.map((r) => r.duration));
  const ok = results.reduce((sum, r) => sum + r['2xx'], 0);
  const errors = results.reduce((sum, r) => sum + r.errors, 0);
  return {
    connections: targets.reduce((sum, t) => sum + t.connections, 0),
    seconds,
    requests: samples.length,
    reqPerSec: round(samples.length / seconds, 1),
    okPerSec: round(ok / seconds, 1),
    ok,
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors,
    timeouts: results.reduce((sum, r) => sum + r.timeouts, 0),
    statusCodes,
    ...latencyOf(withOverLimit(samples, errors)),
    cpu: {
      serverPct: round(cpus.reduce((sum, c) => sum + c.serverPct, 0), 1),
      serverUsPerReq: round(cpus.reduce((sum, c) => sum + c.serverUsPerReq, 0), 1),
      eventLoopUsPerReq: round(cpus.reduce((sum, c) => sum + c.eventLoopUsPerReq, 0), 1),
      generatorPct: cpus[0]!.generatorPct,
      threadsUsPerReq: cpus.reduce<Record<string, number>>((all, c) => {
        for (const [name, us] of Object.entries(c.threadsUsPerReq)) all[name] = round((all[name] ?? 0) + us, 1);
        return all;
      }, {}),
      // Every server's meter read the same cluster over the same run: its figure once.
      ...(cpus[0]!.clusterUsPerReq === undefined ? {} : { clusterUsPerReq: cpus[0]!.clusterUsPerReq }),
    },
  };
}

/** Creates; `task` picks each one's task (by default round-robin over the open tasks). */
export function postRequests(path = '/v1/checkpoints', task: (i: number) => string = taskId): Requests {
  let n = 0;
  return [
    {
      method: 'POST',
      path,
      setupRequest: (request) => {
        const i = n++;
        // The body counter keeps content unique across runs.
        request.body = uniqueCheckpointBody(task(i));
        return request;
      },
    },
  ];
}

export function getRequests(ids: string[]): () => Requests {
  return () => {
    let n = 0;
    return [
      {
        method: 'GET',
        path: `/v1/checkpoints/${ids[0]}`,
        setupRequest: (request) => {
          request.path = `/v1/checkpoints/${ids[n++ % ids.length]}`;
          return request;
        },
      },
    ];
  };
}

export function historyRequests(): Requests {
  let n = 0;
  return [
    {
      method: 'GET',
      path: `/v1/tasks/${historyTaskId(0)}/checkpoints?limit=${HISTORY_LIMIT}`,
      setupRequest: (request) => {
        request.path = `/v1/tasks/${historyTaskId(n++ % HISTORY_TASKS)}/checkpoints?limit=${HISTORY_LIMIT}`;
        return request;
      },
    },
  ];
}
