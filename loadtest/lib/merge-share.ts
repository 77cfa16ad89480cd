/**
 * Whether a run's creates had their full-text merges made within it: the
 * creates every instance committed (`checkpoint_write_latency_ms_count` for
 * creates) and the checkpoints every instance's indexer merged
 * (`indexer_merged_total`), read from each instance's `/metrics` before and
 * after. A run whose instances merged fewer than they created left part of
 * its work, the merge, to whatever runs next (the indexer duty is one
 * instance's, and only that instance's own creates wait for it past a
 * bound): its creates/s are not a rate the fleet can keep up.
 *
 * @module
 */
import { ADMIN_TOKEN } from './http-config.js';
import type { Server } from './servers.js';

export interface MergeCounts {
  created: number;
  merged: number;
}

const HOLDS_INDEXER = /^duty_held\{[^}]*duty="indexer"[^}]*\} 1$/;
const CREATED = /^checkpoint_write_latency_ms_count\{[^}]*operation="create"[^}]*\} (\d+(?:\.\d+)?)$/;
const MERGED = /^indexer_merged_total (\d+(?:\.\d+)?)$/;

/** The lines of `server`'s `/metrics`. */
async function metricLines(server: Server): Promise<string[]> {
  return (await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text()).split('\n');
}

/** The creates and merges counted so far by `servers`, summed. */
export async function mergeCounts(servers: Server[]): Promise<MergeCounts> {
  const counts: MergeCounts = { created: 0, merged: 0 };
  for (const server of servers) {
    for (const line of await metricLines(server)) {
      const created = CREATED.exec(line);
      if (created !== null) counts.created += Number(created[1]);
      const merged = MERGED.exec(line);
      if (merged !== null) counts.merged += Number(merged[1]);
    }
  }
  return counts;
}

/** The one of `servers` that holds the indexer duty now (`duty_held{duty="indexer"}`), if any does. */
export async function indexerHolder(servers: Server[]): Promise<Server | undefined> {
  for (const server of servers) if ((await metricLines(server)).some((line) => HOLDS_INDEXER.test(line))) return server;
  return undefined;
}

/** What `run` created and merged across `servers`, with its result. */
export async function withMergeShare<T>(servers: Server[], run: () => Promise<T>): Promise<{ result: T; share: MergeCounts }> {
  const before = await mergeCounts(servers);
  const result = await run();
  const after = await mergeCounts(servers);
  return { result, share: { created: after.created - before.created, merged: after.merged - before.merged } };
}
