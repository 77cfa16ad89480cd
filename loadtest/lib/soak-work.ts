/**
 * The soak's mixed work (`loadtest/soak.ts`): what one operation is, drawn
 * by weight, against one Baton. Creates carry evolving text
 * (`EvolvingBodies`), patches chain on the ETag, finalizations close a
 * task's latest checkpoint, handoffs are acknowledged by the next agent and
 * its lease released, leases are taken, renewed and released on tasks of
 * their own, and reads, history and search read what was written. Every
 * operation records its latency by kind and whether it failed.
 *
 * @module
 */
import { call } from './http-client.js';
import { EvolvingBodies } from './http-payloads.js';
import { OVER_LIMIT_MS } from './stats.js';

export type Kind = 'create' | 'patch' | 'finalize' | 'handoff' | 'lease' | 'read' | 'latest' | 'history' | 'search';

/** How often each kind is drawn, in parts of 100: writes about 45 %, as agents checkpoint and read back. */
export const WEIGHTS: Readonly<Record<Kind, number>> = { create: 28, patch: 12, finalize: 2, handoff: 3, lease: 3, read: 25, latest: 10, history: 10, search: 7 };
/** The requests each kind sends (a handoff: create, handoff, ack, release; a lease: acquire, renew, release). */
export const REQUESTS: Readonly<Record<Kind, number>> = { create: 1, patch: 1, finalize: 1, handoff: 4, lease: 3, read: 1, latest: 1, history: 1, search: 1 };

/** Tasks written at once: agents' open work. */
const TASKS = 300;
const LEASE_TASKS = 50;

interface TaskState {
  /** The task's newest checkpoint and its version, once it has one. */
  latest?: { id: string; version: number; finalized: boolean };
  busy: boolean;
}

export interface Outcome {
  kind: Kind;
  ms: number;
  failed: boolean;
  /** The answer that failed the operation (`status` or `error`), for the failure table. */
  failure?: string;
  /** Bytes of checkpoint bodies sent (creates and patches), for the disk's growth per write. */
  bytes: number;
}

function post(url: string, body: string, headers: Record<string, string> = {}): ReturnType<typeof call> {
  return call(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(OVER_LIMIT_MS) });
}

/** What one operation came to: success, the checkpoint bytes it sent, and what failed it. */
interface Result {
  ok: boolean;
  bytes: number;
  failure?: string;
}

/** `answer` as a result: ok when its status is `expected`, else failed with its status and code. */
function expect(answer: { status: number; body: string }, expected: number, bytes = 0): Result {
  if (answer.status === expected) return { ok: true, bytes };
  const code = /"code":"([a-z_]+)"/.exec(answer.body)?.[1];
  return { ok: false, bytes, failure: code === undefined ? String(answer.status) : `${answer.status} ${code}` };
}

const OK: Result = { ok: true, bytes: 0 };

export class SoakWork {
  private readonly bodies = new EvolvingBodies(46);
  private readonly tasks: TaskState[] = Array.from({ length: TASKS }, () => ({ busy: false }));
  private readonly draw: Kind[] = Object.entries(WEIGHTS).flatMap(([kind, weight]) => Array<Kind>(weight).fill(kind as Kind));
  private n = 0;

  constructor(private readonly base: string) {}

  /** Gives every task and lease task its first checkpoint, so that reads have something to read from the start. */
  async seed(): Promise<void> {
    for (let start = 0; start < TASKS; start += 20) {
      await Promise.all(Array.from({ length: Math.min(20, TASKS - start) }, (_, i) => this.create(start + i)));
    }
    for (let i = 0; i < LEASE_TASKS; i++) await post(`${this.base}/v1/checkpoints`, this.bodies.next(`soak-lease-${i}`, this.n++));
  }

  /** One operation of a kind drawn by weight. */
  async next(): Promise<Outcome> {
    const kind = this.draw[Math.floor(Math.random() * this.draw.length)]!;
    const started = performance.now();
    let failed = true;
    let bytes = 0;
    let failure: string | undefined;
    try {
      const result = await this.run(kind);
      failed = !result.ok;
      bytes = result.bytes;
      if (failed) failure = `${kind} ${result.failure ?? '?'}`;
    } catch (error) {
      failed = true;
      failure = `${kind} ${error instanceof Error ? error.name : 'error'}`;
    }
    return { kind, ms: performance.now() - started, failed, bytes, ...(failure !== undefined ? { failure } : {}) };
  }

  private async run(kind: Kind): Promise<Result> {
    switch (kind) {
      case 'create':
        return this.create(Math.floor(Math.random() * TASKS));
      case 'patch':
        return this.patch();
      case 'finalize':
        return this.finalize();
      case 'handoff':
        return this.handoff();
      case 'lease':
        return this.lease();
      case 'read': {
        const task = this.tasks[Math.floor(Math.random() * TASKS)]!;
        if (task.latest === undefined) return OK;
        return expect(await call(`${this.base}/v1/checkpoints/${task.latest.id}`, { signal: AbortSignal.timeout(OVER_LIMIT_MS) }), 200);
      }
      case 'latest':
        return expect(await call(`${this.base}/v1/tasks/${taskId(Math.floor(Math.random() * TASKS))}/checkpoints/latest`, { signal: AbortSignal.timeout(OVER_LIMIT_MS) }), 200);
      case 'history':
        return expect(await call(`${this.base}/v1/tasks/${taskId(Math.floor(Math.random() * TASKS))}/checkpoints?limit=20`, { signal: AbortSignal.timeout(OVER_LIMIT_MS) }), 200);
      case 'search': {
        const query = Math.random() < 0.5 ? `q=${SEARCH_WORDS[Math.floor(Math.random() * SEARCH_WORDS.length)]}&limit=20` : `taskId=${taskId(Math.floor(Math.random() * TASKS))}&limit=20`;
        return expect(await call(`${this.base}/v1/checkpoints?${query}`, { signal: AbortSignal.timeout(OVER_LIMIT_MS) }), 200);
      }
    }
  }

  /** A task's next checkpoint; the task is skipped (not failed) while another operation holds it. */
  private async create(index: number): Promise<Result> {
    const task = this.tasks[index]!;
    if (task.busy) return OK;
    task.busy = true;
    try {
      const body = this.bodies.next(taskId(index), this.n++);
      const res = await post(`${this.base}/v1/checkpoints`, body);
      if (res.status !== 201) return expect(res, 201);
      const { id } = JSON.parse(res.body) as { id: string };
      task.latest = { id, version: 1, finalized: false };
      return { ok: true, bytes: body.length };
    } finally {
      task.busy = false;
    }
  }

  /** A free task whose newest checkpoint is open, or undefined. */
  private openTask(): TaskState | undefined {
    for (let tries = 0; tries < 8; tries++) {
      const task = this.tasks[Math.floor(Math.random() * TASKS)]!;
      if (!task.busy && task.latest !== undefined && !task.latest.finalized) return task;
    }
    return undefined;
  }

  private async patch(): Promise<Result> {
    const task = this.openTask();
    if (task === undefined) return OK;
    task.busy = true;
    try {
      const latest = task.latest!;
      const body = JSON.stringify({ executionState: { currentFocus: `soak patch ${this.n++}` }, metrics: { toolsInvoked: this.n % 500 } });
      const res = await call(`${this.base}/v1/checkpoints/${latest.id}`, {
        method: 'PATCH',
        body,
        headers: { 'content-type': 'application/merge-patch+json', 'if-match': `"${latest.version}"` },
        signal: AbortSignal.timeout(OVER_LIMIT_MS),
      });
      if (res.status !== 200) return expect(res, 200);
      latest.version += 1;
      return { ok: true, bytes: body.length };
    } finally {
      task.busy = false;
    }
  }

  private async finalize(): Promise<Result> {
    const task = this.openTask();
    if (task === undefined) return OK;
    task.busy = true;
    try {
      const res = await post(`${this.base}/v1/checkpoints/${task.latest!.id}/finalize`, JSON.stringify({ status: 'completed' }));
      if (res.status !== 200) return expect(res, 200);
      task.latest!.finalized = true;
      return { ok: true, bytes: 0 };
    } finally {
      task.busy = false;
    }
  }

  /** A fresh task's checkpoint handed off, acknowledged by the next agent, whose lease is then released. */
  private async handoff(): Promise<Result> {
    const n = this.n++;
    const body = this.bodies.next(`soak-handoff-${n}`, n);
    const created = await post(`${this.base}/v1/checkpoints`, body);
    if (created.status !== 201) return expect(created, 201);
    const { id } = JSON.parse(created.body) as { id: string };
    const handoff = await post(`${this.base}/v1/checkpoints/${id}/handoff`, JSON.stringify({ trigger: 'context_limit', contextUtilization: 0.9 }));
    if (handoff.status !== 201) return expect(handoff, 201, body.length);
    const { handoff: record } = JSON.parse(handoff.body) as { handoff: { id: string } };
    const ack = await post(`${this.base}/v1/handoffs/${record.id}/ack`, JSON.stringify({ agentId: `soak-next-${n}`, ttlMs: 60_000 }));
    if (ack.status !== 200) return expect(ack, 200, body.length);
    const { lease } = JSON.parse(ack.body) as { lease: { leaseId: string } };
    return expect(await post(`${this.base}/v1/leases/${lease.leaseId}/release`, '{}'), 200, body.length);
  }

  private async lease(): Promise<Result> {
    const task = `soak-lease-${Math.floor(Math.random() * LEASE_TASKS)}`;
    const acquired = await post(`${this.base}/v1/tasks/${task}/lease`, JSON.stringify({ agentId: `soak-holder-${this.n++}`, ttlMs: 30_000 }));
    // Another operation holds this task's lease right now: a true answer of the service, not a failure.
    if (acquired.status === 409) return OK;
    if (acquired.status !== 201) return expect(acquired, 201);
    const { leaseId } = JSON.parse(acquired.body) as { leaseId: string };
    const renewed = await post(`${this.base}/v1/leases/${leaseId}/renew`, JSON.stringify({ ttlMs: 30_000 }));
    const released = await post(`${this.base}/v1/leases/${leaseId}/release`, '{}');
    return renewed.status !== 200 ? expect(renewed, 200) : expect(released, 200);
  }
}

/** Words the evolving bodies use, for full-text search. */
const SEARCH_WORDS = ['lease', 'handoff', 'journal', 'replay', 'schema', 'conflict', 'snapshot', 'budget'];

export function taskId(index: number): string {
  return `soak-task-${String(index).padStart(4, '0')}`;
}

