/**
 * The lease epoch carried automatically, over a real socket: after acquire,
 * ack or completing a recovery, a client sends its epoch as
 * `Baton-Lease-Epoch` on every fenced write to that task (create, patch,
 * finalize, link, handoff) and on nothing else; two clients in one process
 * are two agents with their own epochs; an agent whose lease was superseded
 * keeps sending its old epoch and keeps being refused; release forgets it.
 * Every request is recorded through the client's `fetch` option.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatonClient } from '../../src/client/index.js';
import { listen, work, type Listening } from './support/server.js';

interface Sent {
  method: string;
  path: string;
  epoch: string | null;
}

describe('lease epochs carried by the client, over a real socket', () => {
  let server: Listening;

  beforeAll(async () => {
    server = await listen();
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A client whose requests are recorded: method, path and the Baton-Lease-Epoch it carried. */
  const recorded = (): { client: BatonClient; sent: Sent[] } => {
    const sent: Sent[] = [];
    const client = server.client({
      fetch: (input, init) => {
        sent.push({ method: init.method ?? 'GET', path: new URL(input).pathname, epoch: new Headers(init.headers).get('baton-lease-epoch') });
        return fetch(input, init);
      },
    });
    return { client, sent };
  };

  it('after acquire, every fenced write to the task carries the epoch; reads and other tasks do not', async () => {
    const { client: a, sent } = recorded();
    const lease = await a.leases.acquire('epoch-t1', { agentId: 'agent-a' });
    expect(lease.epoch).toBe(1);
    expect(a.leaseEpoch('epoch-t1')).toBe(1);

    const first = await a.checkpoints.create(work('epoch-t1', 'agent-a'));
    const second = await a.checkpoints.create(work('epoch-t1', 'agent-a'));
    await a.checkpoints.patch(first.id, { executionState: { phase: 'testing' } }, { ifMatch: 1 });
    await a.checkpoints.link(first.id, second.id);
    await a.checkpoints.finalize(first.id, { status: 'completed' });
    await a.checkpoints.get(second.id);
    await a.checkpoints.create(work('epoch-t2', 'agent-a'));
    await a.handoffs.start(second.id, { trigger: 'phase_complete' });

    expect(sent.map((s) => [s.method, s.path.replace(/[0-9a-f-]{36}/g, ':id'), s.epoch])).toEqual([
      ['POST', '/v1/tasks/epoch-t1/lease', null],
      ['POST', '/v1/checkpoints', '1'],
      ['POST', '/v1/checkpoints', '1'],
      ['PATCH', '/v1/checkpoints/:id', '1'],
      ['POST', '/v1/checkpoints/:id/links', '1'],
      ['POST', '/v1/checkpoints/:id/finalize', '1'],
      ['GET', '/v1/checkpoints/:id', null],
      ['POST', '/v1/checkpoints', null],
      ['POST', '/v1/checkpoints/:id/handoff', '1'],
    ]);
  });

  it('a client that has not seen a checkpoint reads it first to learn its task, then writes with the epoch', async () => {
    const orchestrator = server.client();
    const made = await orchestrator.checkpoints.create(work('epoch-lookup', 'planner'));
    const { client: a, sent } = recorded();
    await a.leases.acquire('epoch-lookup', { agentId: 'agent-a' });
    const patched = await a.checkpoints.patch(made.id, { labels: { picked: true } }, { ifMatch: 1 });
    expect(patched.version).toBe(2);
    expect(sent.slice(1).map((s) => [s.method, s.epoch])).toEqual([
      ['GET', null],
      ['PATCH', '1'],
    ]);
    // Without the epoch the same write is refused while the lease is live: the lookup is what made it pass.
    await expect(orchestrator.checkpoints.patch(made.id, { labels: { picked: false } }, { ifMatch: 2 })).rejects.toMatchObject({ status: 428, code: 'lease_required' });
  });

  it('two agents: the successor carries its new epoch after ack and after completing a recovery; the superseded agent keeps its old one and is refused; release forgets', async () => {
    const a = server.client();
    const b = server.client();
    const c = server.client();
    const orchestrator = server.client();
    const taskId = 'epoch-story';

    await a.leases.acquire(taskId, { agentId: 'agent-a' });
    const work1 = await a.checkpoints.create(work(taskId, 'agent-a'));
    const { handoff } = await a.handoffs.start(work1.id, { trigger: 'context_limit' });
    const acked = await b.handoffs.ack(handoff.id, { agentId: 'agent-b' });
    expect(acked.lease.epoch).toBe(2);
    expect([a.leaseEpoch(taskId), b.leaseEpoch(taskId)]).toEqual([1, 2]);

    // b writes to the child it got without ever reading it: the ack answer told its client the task.
    const child = await b.checkpoints.patch(acked.checkpoint.id, { executionState: { currentFocus: 'tests' } }, { ifMatch: 1 });
    expect(child.version).toBe(2);
    const late = await a.checkpoints.create(work(taskId, 'agent-a')).catch((e: unknown) => e);
    expect(late).toMatchObject({ status: 409, code: 'lease_superseded', problem: { epoch: 2 } });

    const { recovery } = await orchestrator.recoveries.start(taskId, { reason: 'agent-b stopped answering', failure: { kind: 'crash' } });
    const completed = await c.recoveries.complete(recovery.id, { agentId: 'agent-c' });
    expect(completed.lease.epoch).toBe(4);
    expect(c.leaseEpoch(taskId)).toBe(4);
    await c.checkpoints.create(work(taskId, 'agent-c', { parentId: child.id }));
    await expect(b.checkpoints.patch(child.id, { labels: { late: true } }, { ifMatch: 2 })).rejects.toMatchObject({ status: 409, code: 'lease_superseded', problem: { epoch: 4 } });

    await c.leases.release(completed.lease.leaseId);
    expect(c.leaseEpoch(taskId)).toBeUndefined();
    // The task has no live lease now: c's write without an epoch is accepted ...
    await c.checkpoints.create(work(taskId, 'agent-c'));
    // ... while b, which never released, still sends its superseded epoch and is still refused.
    expect(b.leaseEpoch(taskId)).toBe(2);
    await expect(b.checkpoints.create(work(taskId, 'agent-b'))).rejects.toMatchObject({ status: 409, code: 'lease_superseded' });
  });
});
