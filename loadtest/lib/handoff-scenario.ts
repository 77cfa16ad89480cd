/**
 * The handoff scenario of the HTTP benchmark: `HANDOFF_WORKERS` agents at a
 * time, each in a loop on its own task, create a checkpoint, hand it off and
 * acknowledge the handoff as the next agent. The create and the handoff +
 * acknowledgment (two requests, timed together from the first send to the
 * second answer) are timed in the same loop at the same concurrency, so the
 * DESIGN §9 ratio — handoff + ack p99 within 3 × a create's p99 — compares
 * like with like.
 *
 * @module
 */
import { HANDOFF_WORKERS, SECONDS, WARMUP_SECONDS } from './http-config.js';
import { call } from './http-client.js';
import { uniqueCheckpointBody } from './http-payloads.js';
import { cpuMeter, type Cpu } from './proc.js';
import { assertAlive, type Server } from './servers.js';
import { latencyOf, round, type Latency } from './stats.js';

export interface HandoffFigures {
  workers: number;
  seconds: number;
  /** Completed create → handoff → ack cycles. */
  cycles: number;
  cyclesPerSec: number;
  failures: number;
  create: Latency;
  handoffAck: Latency;
  cpu: Cpu;
}

async function cycle(base: string, task: string, n: number): Promise<{ createMs: number; handoffAckMs: number }> {
  const t0 = performance.now();
  const created = await call(`${base}/v1/checkpoints`, { method: 'POST', body: uniqueCheckpointBody(task) });
  const t1 = performance.now();
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${created.body.slice(0, 300)}`);
  const { id } = JSON.parse(created.body) as { id: string };
  const t2 = performance.now();
  const handoff = await call(`${base}/v1/checkpoints/${id}/handoff`, { method: 'POST', body: JSON.stringify({ trigger: 'context_limit', contextUtilization: 0.9 }) });
  if (handoff.status !== 201) throw new Error(`handoff answered ${handoff.status}: ${handoff.body.slice(0, 300)}`);
  const { handoff: record } = JSON.parse(handoff.body) as { handoff: { id: string } };
  const ack = await call(`${base}/v1/handoffs/${record.id}/ack`, { method: 'POST', body: JSON.stringify({ agentId: `bench-agent-${n}`, ttlMs: 60_000 }) });
  const t3 = performance.now();
  if (ack.status !== 200) throw new Error(`ack answered ${ack.status}: ${ack.body.slice(0, 300)}`);
  // The next cycle's create must carry the new holder's epoch: release the lease so the loop stays unfenced.
  const { lease } = JSON.parse(ack.body) as { lease: { leaseId: string } };
  await call(`${base}/v1/leases/${lease.leaseId}/release`, { method: 'POST', body: '{}' });
  return { createMs: t1 - t0, handoffAckMs: t3 - t2 };
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
        try {
          const { createMs, handoffAckMs } = await cycle(server.url, task, n++);
          if (record) {
            creates.push(createMs);
            handoffs.push(handoffAckMs);
          }
        } catch {
          failures++;
        }
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
