/**
 * Whether the indexer keeps up (issue: the search index built off the
 * request path): closed-loop creates at the benchmark's connections for
 * BENCH_INDEXER_SECONDS (default 60), the server's `indexer_backlog` (its
 * creates whose words wait in the full-text pending list) read every 5 s,
 * then how long the list takes to empty once the load stops. A backlog that
 * stays flat while creates run at their highest rate is an indexer that
 * keeps up; one that grows is one that does not, and creates would soon
 * wait for it (the list's bound).
 *
 * @module
 */
import { serverMetric } from './http-client.js';
import { closedLoop, postRequests, type ClosedFigures } from './http-scenarios.js';
import type { Server } from './servers.js';

export const INDEXER_SECONDS = Number(process.env.BENCH_INDEXER_SECONDS ?? 60);
const EVERY_MS = 5_000;

export interface IndexerFigures {
  seconds: number;
  creates: ClosedFigures;
  /** `indexer_backlog` every 5 s of the run. */
  backlog: number[];
  /** Checkpoints merged during the measured run (`indexer_merged_total`), beside `creates.ok`. */
  merged: number;
  /** From the end of the load to an empty backlog, in seconds (NaN: not within 60 s). */
  settleSeconds: number;
}

export async function indexerScenario(baton: Server): Promise<IndexerFigures> {
  const backlog: number[] = [];
  let mergedBefore = NaN;
  let sampling = false;
  let started = 0;
  // Sampled from the measured run on (closedLoop's `before` runs ahead of its warm-up and again ahead of the run).
  let befores = 0;
  const timer = setInterval(() => {
    if (sampling) void serverMetric(baton, 'indexer_backlog').then((value) => backlog.push(value));
  }, EVERY_MS);
  const creates = await closedLoop(
    baton,
    postRequests,
    undefined,
    async () => {
      if (++befores === 2) {
        mergedBefore = await serverMetric(baton, 'indexer_merged_total');
        sampling = true;
        started = Date.now();
      }
    },
    INDEXER_SECONDS,
  );
  sampling = false;
  clearInterval(timer);
  const stopped = Date.now();
  const merged = (await serverMetric(baton, 'indexer_merged_total')) - mergedBefore;
  let settleSeconds = NaN;
  while (Date.now() - stopped < 60_000) {
    if ((await serverMetric(baton, 'indexer_backlog')) === 0) {
      settleSeconds = (Date.now() - stopped) / 1000;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { seconds: (stopped - started) / 1000, creates, backlog, merged, settleSeconds };
}
