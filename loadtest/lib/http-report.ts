/**
 * How the HTTP benchmark prints its figures: the closed-loop and open-loop
 * tables and the formats of the ratio lines below them.
 *
 * @module
 */
import type { ClosedFigures } from './http-scenarios.js';
import type { OpenFigures, OpenRun } from './open-loop.js';
import type { Cpu } from './proc.js';
import { OVER_LIMIT_MS, type Latency } from './stats.js';
import { alignedTable, fixed } from './tables.js';

export const pct = (ratio: number): string => (Number.isFinite(ratio) ? `${(ratio * 100).toFixed(1)} %` : '-');
export const times = (ratio: number): string => (Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : '-');
export const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');

function codes(statusCodes: Record<string, number>): string {
  return Object.entries(statusCodes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, count]) => `${code}:${count}`)
    .join(' ');
}

/** The p50, p99 and max cells. */
const latencyCells = (l: Latency): string[] => [fixed(l.p50Ms, 2), fixed(l.p99Ms, 2), fixed(l.maxMs, 2)];

/** The srv cpu, srv us/req, loop us/req (the server's main thread alone) and gen cpu cells. */
const cpuCells = (cpu: Cpu): string[] => [`${fixed(cpu.serverPct, 0)} %`, fixed(cpu.serverUsPerReq, 0), fixed(cpu.eventLoopUsPerReq, 0), `${fixed(cpu.generatorPct, 0)} %`];

/**
 * One row per closed-loop run: [scenario, server, figures]. `errors` counts
 * every request without an answer, `timeouts` the part of them that timed
 * out; each is in the percentiles as {@link OVER_LIMIT_MS}.
 */
export function closedTable(rows: [string, string, ClosedFigures][]): string {
  const head = ['scenario', 'server', 'conns', 'secs', 'requests', 'req/s', '2xx/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'timeouts', 'srv cpu', 'srv us/req', 'loop us/req', 'gen cpu', 'status codes'];
  const body = rows.map(([name, server, f]) => [
    name,
    server,
    String(f.connections),
    fixed(f.seconds, 2),
    String(f.requests),
    fixed(f.reqPerSec, 0),
    fixed(f.okPerSec, 0),
    ...latencyCells(f),
    String(f.non2xx),
    String(f.errors),
    String(f.timeouts),
    ...cpuCells(f.cpu),
    codes(f.statusCodes),
  ]);
  return alignedTable(head, body, 2);
}

/** Per server, one row per paced stream, then an `all` row with the latency over every stream and the CPU. */
export function openTable(runs: [string, OpenRun][]): string {
  const head = ['open loop', 'server', 'rate/s', 'scheduled', 'done/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'srv cpu', 'srv us/req', 'loop us/req', 'gen cpu', 'status codes'];
  const body: string[][] = [];
  for (const [server, run] of runs) {
    for (const [name, f] of Object.entries(run.streams)) {
      body.push([name, server, fixed(f.rate, 0), String(f.scheduled), fixed(f.achievedPerSec, 0), ...latencyCells(f), String(f.non2xx), String(f.errors), '', '', '', '', codes(f.statusCodes)]);
    }
    body.push(['all', server, '', '', '', ...latencyCells(run.all), '', '', ...cpuCells(run.cpu), '']);
  }
  return alignedTable(head, body, 2);
}

/**
 * The figure printed beside an open-loop ratio: how many requests of the
 * Baton and bare runs got no answer (errors, timeouts), each of which counts
 * in the p99 as an over-limit latency.
 */
export function unansweredNote(baton: Pick<OpenFigures, 'errors' | 'scheduled'>, bare: Pick<OpenFigures, 'errors' | 'scheduled'>): string {
  return `unanswered (counted as ${OVER_LIMIT_MS} ms): baton ${baton.errors}/${baton.scheduled}, bare ${bare.errors}/${bare.scheduled}`;
}

/**
 * The figure printed beside a closed-loop ratio: how many requests of the
 * two runs got no answer (errors, timeouts among them), each of which
 * counts in the p99 as an over-limit latency.
 */
export function closedUnansweredNote(baton: Pick<ClosedFigures, 'errors' | 'timeouts'>, bare: Pick<ClosedFigures, 'errors' | 'timeouts'>, bareName = 'bare'): string {
  return `unanswered (counted as ${OVER_LIMIT_MS} ms): baton ${baton.errors} (${baton.timeouts} timed out), ${bareName} ${bare.errors} (${bare.timeouts} timed out)`;
}
