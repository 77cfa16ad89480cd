/**
 * Every write the client makes is safe to retry, over a real socket: for
 * each write route, the proxy lets the server apply the first attempt and
 * loses its answer; the client's retry (same Idempotency-Key) must get the
 * first answer, and the change must have happened once — one audit entry
 * set, one set of events — however the route's own rules would treat a
 * second application (a finalized checkpoint, an acknowledged handoff, a
 * released lease, a stale If-Match).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatonClient, StoredEvent } from '../../src/client/index.js';
import { ScriptedProxy } from './support/proxy.js';
import { listen, work, type Listening } from './support/server.js';

describe('a write whose answer was lost, retried by the client, applies once', () => {
  let server: Listening;
  let proxy: ScriptedProxy;
  let direct: BatonClient;

  beforeAll(async () => {
    server = await listen();
    proxy = await ScriptedProxy.start(server.url);
    direct = server.client();
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
  });

  /** A client whose next call loses its first answer. */
  const losing = (): BatonClient => {
    proxy.script('drop-answer');
    return server.client({ baseUrl: proxy.url });
  };

  const types = async (taskId: string): Promise<StoredEvent['type'][]> =>
    (await direct.events.page({ limit: 1000 })).items.filter((e) => e.data.taskId === taskId).map((e) => e.type);
  const actions = async (taskId: string): Promise<string[]> => (await direct.tasks.audit(taskId, { limit: 1000 })).items.map((e) => e.action);

  /** The last request went out twice with one key, the first attempt's answer lost. */
  const sentTwiceWithOneKey = (): void => {
    const [lost, retried] = proxy.seen.slice(-2);
    expect(lost!.action).toBe('drop-answer');
    expect(retried!.headers['idempotency-key']).toBe(lost!.headers['idempotency-key']);
    expect(`${retried!.method} ${retried!.url}`).toBe(`${lost!.method} ${lost!.url}`);
  };

  it('checkpoint writes: create, patch (stale If-Match on the retry), link, finalize', async () => {
    const taskId = 'replay-checkpoints';
    const a = await losing().checkpoints.create(work(taskId, 'agent-1'));
    sentTwiceWithOneKey();
    const b = await direct.checkpoints.create(work(taskId, 'agent-1'));
    const patched = await losing().checkpoints.patch(a.id, { labels: { step: 1 } }, { ifMatch: 1 });
    sentTwiceWithOneKey();
    expect(patched).toMatchObject({ id: a.id, version: 2, labels: { step: 1 } });
    const linked = await losing().checkpoints.link(a.id, b.id);
    sentTwiceWithOneKey();
    expect(linked).toMatchObject({ parentId: a.id, childId: b.id, child: { parentId: a.id } });
    const finalized = await losing().checkpoints.finalize(a.id, { status: 'completed' });
    sentTwiceWithOneKey();
    expect(finalized).toMatchObject({ id: a.id, status: 'finalized', finalStatus: 'completed', version: 3 });

    expect(await types(taskId)).toEqual(['CHECKPOINT_CREATED', 'CHECKPOINT_CREATED', 'CHECKPOINT_UPDATED', 'CHECKPOINTS_LINKED', 'CHECKPOINT_FINALIZED']);
    expect(await actions(taskId)).toEqual(['checkpoint.created', 'checkpoint.created', 'checkpoint.updated', 'checkpoints.linked', 'checkpoint.finalized']);
  });

  it('leases: acquire, renew, release', async () => {
    const taskId = 'replay-leases';
    const agent = losing();
    const lease = await agent.leases.acquire(taskId, { agentId: 'agent-1' });
    sentTwiceWithOneKey();
    expect(lease).toMatchObject({ agentId: 'agent-1', epoch: 1, status: 'active' });
    proxy.script('drop-answer');
    const renewed = await agent.leases.renew(lease.leaseId, 30_000);
    sentTwiceWithOneKey();
    expect(renewed).toMatchObject({ leaseId: lease.leaseId, epoch: 1, ttlMs: 30_000 });
    proxy.script('drop-answer');
    const released = await agent.leases.release(lease.leaseId);
    sentTwiceWithOneKey();
    expect(released).toMatchObject({ leaseId: lease.leaseId, status: 'released' });
    expect(agent.leaseEpoch(taskId)).toBeUndefined();

    expect(await types(taskId)).toEqual(['LEASE_ACQUIRED']);
    expect(await actions(taskId)).toEqual(['lease.acquired', 'lease.renewed', 'lease.released']);
  });

  it('handoff: start and ack', async () => {
    const taskId = 'replay-handoff';
    const made = await direct.checkpoints.create(work(taskId, 'agent-a'));
    const started = await losing().handoffs.start(made.id, { trigger: 'context_limit' });
    sentTwiceWithOneKey();
    expect(started.checkpoint).toMatchObject({ id: made.id, finalStatus: 'handoff' });
    expect(started.handoff).toMatchObject({ checkpointId: made.id, status: 'pending' });
    const successor = losing();
    const acked = await successor.handoffs.ack(started.handoff.id, { agentId: 'agent-b' });
    sentTwiceWithOneKey();
    expect(acked.lease).toMatchObject({ agentId: 'agent-b', epoch: 1 });
    expect(acked.checkpoint.parentId).toBe(made.id);
    expect(successor.leaseEpoch(taskId)).toBe(1);

    expect((await direct.checkpoints.lineage(made.id)).children.map((n) => n.id)).toEqual([acked.checkpoint.id]);
    expect(await types(taskId)).toEqual(['CHECKPOINT_CREATED', 'CHECKPOINT_FINALIZED', 'AGENT_HANDOFF', 'CHECKPOINT_CREATED', 'CHECKPOINTS_LINKED', 'HANDOFF_ACKNOWLEDGED', 'LEASE_ACQUIRED']);
  });

  it('recovery: start and complete', async () => {
    const taskId = 'replay-recovery';
    const made = await direct.checkpoints.create(work(taskId, 'agent-a'));
    const started = await losing().recoveries.start(taskId, { reason: 'crashed', failure: { kind: 'crash' } });
    sentTwiceWithOneKey();
    expect(started.recovery).toMatchObject({ status: 'initiated', checkpointId: made.id });
    const completed = await losing().recoveries.complete(started.recovery.id, { agentId: 'agent-c' });
    sentTwiceWithOneKey();
    expect(completed.lease).toMatchObject({ agentId: 'agent-c', epoch: 2 });

    expect(await types(taskId)).toEqual(['CHECKPOINT_CREATED', 'RECOVERY_INITIATED', 'RECOVERY_COMPLETED', 'LEASE_ACQUIRED']);
    // One attempt counted by the circuit breaker, not two: the task is at epoch 2 (fenced once, granted once).
    expect(await direct.tasks.get(taskId)).toMatchObject({ epoch: 2, lease: { agentId: 'agent-c', epoch: 2 } });
  });

  it('task state', async () => {
    const taskId = 'replay-state';
    await direct.checkpoints.create(work(taskId, 'agent-a'));
    const info = await losing().tasks.setState(taskId, { state: 'input-required', reason: 'needs a decision' });
    sentTwiceWithOneKey();
    expect(info).toMatchObject({ state: 'input-required', paused: true, finished: false });
    expect((await actions(taskId)).filter((a) => a === 'task.state')).toHaveLength(1);
  });
});
