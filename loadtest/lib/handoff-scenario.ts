/**
 * The handoff scenario of the HTTP benchmark: `HANDOFF_WORKERS` agents at a
 * time, each in a loop on its own task, create a checkpoint, hand it off and
 * acknowledge the handoff as the next agent. The create and the handoff +
 * acknowledgment (two requests, timed together from the first send to the
 * second answer) are timed in the same loop at the same concurrency, so the
 * DESIGN §9 ratio — handoff + ack p99 within 3 × a create's p99 — compares
 * like with like. A step that fails (an error status, a network error, or
 * no answer within `OVER_LIMIT_MS`) counts in its percentiles as
 * `OVER_LIMIT_MS`, as the other loops count them, besides in `failures`.
 *
 * @module
 */
import { HANDOFF_WORKERS, SECONDS, WARMUP_SECONDS } from './http-config.js';
import { call } from './http-client.js';
import { uniqueCheckpointBody } from './http-payloads.js';
import { cpuMeter, type Cpu } from './proc.js';
import { assertAlive, type Server } from './servers.js';
import { latencyOf, OVER_LIMIT_MS, round, type Latency } from './stats.js';

export interface HandoffFigures {
  workers: number;
  seconds: number;
  /** Cycles whose handoff + ack was timed (answered, or counted over-limit). */
  cycles: number;
  cyclesPerSec: number;
  /** Cycles with a failed step: each such step is in its percentiles as `OVER_LIMIT_MS`. */
  failures: number;
  create: Latency;
  handoffAck: Latency;
  cpu: Cpu;
}

/** What one cycle measured: a step that failed has no latency of its own. */
interface Cycle {
  createMs?: number;
  handoffAckMs?: number;
  failed: boolean;
}

/** A request of the cycle, given up on after `OVER_LIMIT_MS`. */
function send(url: string, body: string): ReturnType<typeof call> {
  return call(url, { method: 'POST', body, signal: AbortSignal.timeout(OVER_LIMIT_MS) });
}

async function cycle(base: string, task: string, n: number): Promise<Cycle> {
  let id: string;
  const t0 = performance.now();
  try {
    const created = await send(`${base}/v1/checkpoints`, uniqueCheckpointBody(task));
    if (created.status !== 201) return { failed: true };
    id = (JSON.parse(created.body) as { id: string }).id;
  } catch {
    return { failed: true };
  }
  const createMs = performance.now() - t0;
  let leaseId: string;
  const t2 = performance.now();
  try {
    const handoff = await send(`${base}/v1/checkpoints/${id}/handoff`, JSON.stringify({ trigger: 'context_limit', contextUtilization: 0.9 }));
    if (handoff.status !== 201) return { createMs, failed: true };
    const { handoff: record } = JSON.parse(handoff.body) as { handoff: { id: string } };
    const ack = await send(`${base}/v1/handoffs/${record.id}/ack`, JSON.stringify({ agentId: `bench-agent-${n}`, ttlMs: 60_000 }));
    if (ack.status !== 200) return { createMs, failed: true };
    leaseId = (JSON.parse(ack.body) as { lease: { leaseId: string } }).lease.leaseId;
  } catch {
    return { createMs, failed: true };
  }
  const handoffAckMs = performance.now() - t2;
  // The next cycle's create must carry the new holder's epoch: release the lease so the loop stays unfenced.
  try {
    const released = await send(`${base}/v1/leases/${leaseId}/release`, '{}');
    return { createMs, handoffAckMs, failed: released.status !== 200 };
  } catch {
    return { createMs, handoffAckMs, failed: true };
  }
}

async function run(server: Server, seconds: number, record: boolean, round0: number): Promise<{ creates: number[]; handoffs: number[]; failures: number }> {
  const creates: number[] = [];
  const handoffs: number[] = [];
  let failures = 0;
  const deadline = performance.now() + seconds * 1000;
  let n = round0;
  await Promise.all(
    Array.from({ length: HANDOFF_WORKERS }, async (_, worker) => {
      const task = `bench-handoff-${round0}-${worker}`;
      while (performance.now() < deadline) {
        const { createMs, handoffAckMs, failed } = await cycle(server.url, task, n++);
        if (failed) failures++;
        if (!record) continue;
        // A step that failed counts as over-limit; one never reached (the handoff after a failed create) counts nowhere.
        creates.push(createMs ?? OVER_LIMIT_MS);
        if (createMs !== undefined) handoffs.push(handoffAckMs ?? OVER_LIMIT_MS);
      }
    }),
  );
  return { creates, handoffs, failures };
}

export async function handoffScenario(server: Server): Promise<HandoffFigures> {
  await run(server, WARMUP_SECONDS, false, 0);
  assertAlive(server);
  const meter = cpuMeter(server.child.pid);
  const { creates, handoffs, failures } = await run(server, SECONDS, true, 1);
  const cpu = meter(creates.length * 4);
  assertAlive(server);
  return {
    workers: HANDOFF_WORKERS,
    seconds: SECONDS,
    cycles: handoffs.length,
    cyclesPerSec: round(handoffs.length / SECONDS, 1),
    failures,
    create: latencyOf(creates),
    handoffAck: latencyOf(handoffs),
    cpu,
  };
}
