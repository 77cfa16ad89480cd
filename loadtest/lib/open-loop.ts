/**
 * The open-loop load of the HTTP benchmark (no autocannon): requests evenly
 * paced by a timer at fixed rates over keep-alive `node:http` connections,
 * each timed from its intended send time. A closed loop slows down with the
 * server and so hides its stalls; here a stall of the server (or of the
 * generator) counts against every request scheduled during it. A request
 * that errors, times out or is never answered counts too, as an over-limit
 * latency (`OVER_LIMIT_MS`, `stats.ts`): leaving it out would let an overloaded
 * server that drops requests look fast.
 *
 * @module
 */
import http from 'node:http';
import { OPEN_CREATES, OPEN_READS, SECONDS, WARMUP_SECONDS } from './http-config.js';
import { authHeaders, jsonHeaders } from './http-client.js';
import { taskId, uniqueCheckpointBody, useBodyStream } from './http-payloads.js';
import { cpuMeter, type Cpu } from './proc.js';
import { assertAlive, type Server } from './servers.js';
import { latencyOf, OVER_LIMIT_MS, round, withOverLimit, type Latency } from './stats.js';

/** How long a request may sit idle on its socket before the generator gives up on it. */
const REQUEST_TIMEOUT_MS = OVER_LIMIT_MS;

export interface PacedStream {
  name: string;
  rate: number;
  /** `target`: the server this request goes to (a fleet's instance); the run's server when absent. */
  request: (k: number) => { method: string; path: string; body?: string; target?: Server };
}

/**
 * Latency (p50, p99, max) over every request the stream scheduled, each from
 * its intended send time; one without an answer counts as `OVER_LIMIT_MS`.
 */
export interface OpenFigures extends Latency {
  rate: number;
  scheduled: number;
  /** Requests answered (any status). */
  completed: number;
  achievedPerSec: number;
  ok: number;
  non2xx: number;
  /** Requests that errored, timed out or were not answered by the end: each counted as over-limit in the latency. */
  errors: number;
  statusCodes: Record<string, number>;
}

export interface OpenRun {
  streams: Record<string, OpenFigures>;
  /** Over every stream's scheduled requests, the unanswered ones as over-limit. */
  all: Latency;
  /** Requests of every stream that errored, timed out or were not answered. */
  errors: number;
  /** How late requests were handed to the socket layer after their intended send time (generator health). */
  schedulerLag: Latency;
  /** Most requests in flight at once. */
  maxInFlight: number;
  cpu: Cpu;
}

export async function openLoop(server: Server, agent: http.Agent, streams: PacedStream[], seconds: number): Promise<OpenRun> {
  useBodyStream(server.url);
  const meter = cpuMeter(server.child.pid);
  const baseHeaders = { ...jsonHeaders, host: `${server.host}:${server.port}` };
  const stats = streams.map(() => ({ samples: [] as number[], ok: 0, non2xx: 0, statusCodes: {} as Record<string, number> }));
  const all: number[] = [];
  const totals = streams.map((s) => Math.floor(s.rate * seconds));
  const next = streams.map(() => 0);
  let inFlight = 0;
  let maxInFlight = 0;
  const lags: number[] = [];
  let settle: (() => void) | undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const start = performance.now() + 20;
  const intended = (s: number, k: number): number => start + (k * 1000) / streams[s]!.rate;

  const fire = (s: number, k: number, at: number): void => {
    const { method, path, body, target = server } = streams[s]!.request(k);
    const stat = stats[s]!;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let done = false;
    const finish = (status: number | undefined): void => {
      if (done) return;
      done = true;
      inFlight--;
      const ms = performance.now() - at;
      // An error or timeout has no latency of its own: it is counted, as over-limit, from the totals at the end.
      if (status !== undefined) {
        stat.statusCodes[status] = (stat.statusCodes[status] ?? 0) + 1;
        if (status >= 200 && status < 300) stat.ok++;
        else stat.non2xx++;
        stat.samples.push(ms);
        all.push(ms);
      }
      if (inFlight === 0 && next.every((n, i) => n >= totals[i]!)) settle?.();
    };
    const host = `${target.host}:${target.port}`;
    const headers: Record<string, string | number> = body === undefined ? { ...authHeaders, host } : { ...baseHeaders, host, 'content-length': Buffer.byteLength(body) };
    const request = http.request({ agent, host: target.host, port: target.port, method, path, headers }, (response) => {
      response.on('data', () => undefined);
      response.on('end', () => finish(response.statusCode));
      response.on('error', () => finish(undefined));
    });
    request.setTimeout(REQUEST_TIMEOUT_MS, () => request.destroy(new Error('timeout')));
    request.on('error', () => finish(undefined));
    request.end(body);
  };

  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      let due = Infinity;
      streams.forEach((_, s) => {
        while (next[s]! < totals[s]! && intended(s, next[s]!) <= now) {
          const at = intended(s, next[s]!);
          lags.push(now - at);
          fire(s, next[s]!, at);
          next[s]!++;
        }
        if (next[s]! < totals[s]!) due = Math.min(due, intended(s, next[s]!));
      });
      if (due === Infinity) return resolve();
      setTimeout(tick, Math.max(0, Math.floor(due - performance.now())));
    };
    setTimeout(tick, 20);
  });
  if (inFlight > 0) {
    const limit = new Promise<void>((resolve) => setTimeout(resolve, 15_000).unref());
    await Promise.race([settled, limit]);
  }
  const cpu = meter(all.length);
  assertAlive(server);

  const figures: Record<string, OpenFigures> = {};
  let unanswered = 0;
  streams.forEach((stream, s) => {
    const stat = stats[s]!;
    // Errored and timed-out requests, and any still unanswered when the run gave up waiting.
    const errors = totals[s]! - stat.samples.length;
    unanswered += errors;
    figures[stream.name] = {
      rate: stream.rate,
      scheduled: totals[s]!,
      completed: stat.samples.length,
      achievedPerSec: round(stat.samples.length / seconds, 1),
      ok: stat.ok,
      non2xx: stat.non2xx,
      errors,
      statusCodes: stat.statusCodes,
      ...latencyOf(withOverLimit(stat.samples, errors)),
    };
  });
  return { streams: figures, all: latencyOf(withOverLimit(all, unanswered)), errors: unanswered, schedulerLag: latencyOf(lags), maxInFlight, cpu };
}

function pacedStreams(readIds: string[], createPath: string): PacedStream[] {
  return [
    {
      name: 'create',
      rate: OPEN_CREATES,
      request: (k) => ({ method: 'POST', path: createPath, body: uniqueCheckpointBody(taskId(k)) }),
    },
    {
      name: 'read',
      rate: OPEN_READS,
      request: (k) => ({ method: 'GET', path: `/v1/checkpoints/${readIds[k % readIds.length]}` }),
    },
  ];
}

/**
 * Warm-up (discarded), then the measured run, over the same keep-alive
 * connections; creates go to `createPath` (the bare server's floor route for
 * the floor's run).
 */
export async function openLoopMeasured(server: Server, readIds: string[], createPath = '/v1/checkpoints'): Promise<OpenRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  try {
    await openLoop(server, agent, pacedStreams(readIds, createPath), WARMUP_SECONDS);
    return await openLoop(server, agent, pacedStreams(readIds, createPath), SECONDS);
  } finally {
    agent.destroy();
  }
}
