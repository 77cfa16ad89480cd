/**
 * The growth benchmark's read figures: one request at a time over one
 * keep-alive connection, so that each latency is the cost of one request and
 * not queueing behind others, READ_WARMUP discarded requests and then READS
 * measured ones, each to another task or value (`scale-data.ts`). Also the
 * canonical JSON size of checkpoints as the server answers them.
 *
 * @module
 */
import http from 'node:http';
import { canonicalJson, hashedContent } from '../../src/domain/hash.js';
import type { Checkpoint } from '../../src/domain/checkpoint.js';
import { authHeaders } from './http-client.js';
import { READ_WARMUP, READS, SEARCH_LIMIT } from './scale-config.js';
import type { ReadScenario } from './scale-data.js';
import { assertAlive, type Server } from './servers.js';
import { latencyOf, round, type Latency } from './stats.js';

/** Longer than any read should take: one that does not answer in this time stops the run. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface ReadFigures extends Latency {
  requests: number;
  non200: number;
  statusCodes: Record<string, number>;
  meanBytes: number;
  /** Items a page held on average (lists only). */
  meanItems?: number;
  /** Searches: pages that came back with fewer than `limit` items and a `nextCursor`, their read budget spent before the page filled. */
  cutShort?: number;
}

interface Answer {
  status: number;
  body: string;
  ms: number;
}

function get(server: Server, agent: http.Agent, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.request({ host: server.host, port: server.port, path, agent, headers: authHeaders }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ms: performance.now() - started }));
      response.on('error', reject);
    });
    request.setTimeout(REQUEST_TIMEOUT_MS, () => request.destroy(new Error(`GET ${path} did not answer within ${REQUEST_TIMEOUT_MS} ms`)));
    request.on('error', reject);
    request.end();
  });
}

/** Runs `scenario`: READ_WARMUP discarded requests, then READS timed ones; `onAnswer` sees every measured 200. */
export async function measureReads(server: Server, scenario: ReadScenario, onAnswer?: (body: string) => void): Promise<ReadFigures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < READ_WARMUP; i++) await get(server, agent, scenario.path(READS + i));
    const samples: number[] = [];
    const statusCodes: Record<string, number> = {};
    let bytes = 0;
    let items = 0;
    let cutShort = 0;
    for (let i = 0; i < READS; i++) {
      const answer = await get(server, agent, scenario.path(i));
      samples.push(answer.ms);
      statusCodes[answer.status] = (statusCodes[answer.status] ?? 0) + 1;
      bytes += Buffer.byteLength(answer.body);
      if (answer.status !== 200) continue;
      onAnswer?.(answer.body);
      if (scenario.kind === 'latest') continue;
      const page = JSON.parse(answer.body) as { items: unknown[]; nextCursor?: string };
      items += page.items.length;
      if (page.nextCursor !== undefined && page.items.length < SEARCH_LIMIT) cutShort += 1;
    }
    assertAlive(server);
    const ok = statusCodes[200] ?? 0;
    const figures: ReadFigures = { requests: READS, non200: READS - ok, statusCodes, meanBytes: round(bytes / READS, 0), ...latencyOf(samples) };
    if (scenario.kind !== 'latest') figures.meanItems = round(items / Math.max(ok, 1), 1);
    if (scenario.kind === 'search') figures.cutShort = cutShort;
    return figures;
  } finally {
    agent.destroy();
  }
}

/** Canonical JSON sizes (RFC 8785, without `compliance.hash`: what is hashed and stored) of the checkpoints answered. */
export class CanonicalSizes {
  private bytes = 0;
  private count = 0;

  /** Takes the first item of a history page, so that a run of pages samples many tasks. */
  addPage = (body: string): void => {
    const first = (JSON.parse(body) as { items: Checkpoint[] }).items[0];
    if (first === undefined) return;
    this.bytes += Buffer.byteLength(canonicalJson(hashedContent(first)));
    this.count += 1;
  };

  get mean(): number {
    return this.count === 0 ? NaN : round(this.bytes / this.count, 0);
  }

  get samples(): number {
    return this.count;
  }
}
