/**
 * The write-queue scenario of the HTTP benchmark (DESIGN §5): the store is
 * made unavailable through fault injection, and the same closed-loop creates
 * as the create scenario are answered 202 from the durable local queue — each
 * one fsynced before its answer, so the 202 rate is the queue's fsynced
 * append rate. Then the store comes back and the replay is timed until the
 * queue is empty.
 *
 * @module
 */
import { ADMIN_TOKEN } from './http-config.js';
import { closedLoop, postRequests, type ClosedFigures } from './http-scenarios.js';
import type { Server } from './servers.js';
import { memoryOf } from './proc.js';
import { round } from './stats.js';

export interface QueueFigures {
  queued: ClosedFigures;
  /** Writes waiting when the store came back. */
  depth: number;
  /** How long the replay took to apply them, and at what rate. */
  drainSeconds: number;
  drainPerSec: number;
  /** The server's highest resident memory sampled while the queue drained (MB; not VmHWM, the whole run's peak). */
  peakRssMB: number;
}

async function faults(server: Server, store: 'ok' | 'unavailable'): Promise<void> {
  const res = await fetch(`${server.url}/v1/admin/faults`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ store }),
  });
  if (res.status !== 200) throw new Error(`Setting store faults answered ${res.status}: ${await res.text()}`);
}

async function depth(server: Server): Promise<number> {
  const res = await fetch(`${server.url}/readyz`);
  return ((await res.json()) as { queue?: { depth?: number } }).queue?.depth ?? 0;
}

export async function queueScenario(server: Server): Promise<QueueFigures> {
  await faults(server, 'unavailable');
  let queued: ClosedFigures;
  try {
    queued = await closedLoop(server, postRequests);
  } finally {
    await faults(server, 'ok');
  }
  let peakRssMB = 0;
  const sample = (): void => {
    const memory = server.child.pid === undefined ? undefined : memoryOf(server.child.pid);
    if (memory) peakRssMB = Math.max(peakRssMB, memory.rssMB);
  };
  sample();
  const waiting = await depth(server);
  const started = performance.now();
  while ((await depth(server)) > 0) {
    sample();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  sample();
  const drainSeconds = (performance.now() - started) / 1000;
  return { queued, depth: waiting, drainSeconds: round(drainSeconds, 2), drainPerSec: round(waiting / Math.max(drainSeconds, 0.001), 1), peakRssMB: round(peakRssMB, 1) };
}
