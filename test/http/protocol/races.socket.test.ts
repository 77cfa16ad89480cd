/**
 * Issue 7's race "Done when", against the real server in its own process
 * over a real socket, through twenty clients (twenty agents) at once:
 * acknowledging one handoff, acquiring one lease and completing one recovery
 * each has exactly one winner, the others get the code that says someone
 * else won, and the task holds exactly one child checkpoint and one lease,
 * with exactly one set of events. Only the winner's client carries an epoch.
 */
import { describe, expect, it } from 'vitest';
import { BatonClient, BatonError, type StoredEvent } from '../../../src/client/index.js';
import { TOKENS } from '../../support/app.js';
import { useBatonProcess } from '../../support/crash-server.js';
import { work } from '../../client/support/server.js';

const AGENTS = 20;

interface Outcome<T> {
  agent: number;
  client: BatonClient;
  value?: T;
  error?: BatonError;
}

describe('twenty agents racing for one task, over a real socket', () => {
  const server = useBatonProcess('baton-races-');

  const client = (): BatonClient => new BatonClient({ baseUrl: server(), token: TOKENS.writer, timeoutMs: 20_000, backoff: { baseMs: 5, maxMs: 50 } });

  /** Starts `call` for every agent at once; each outcome is its value or its BatonError. */
  async function race<T>(call: (client: BatonClient, agentId: string) => Promise<T>): Promise<{ winners: Outcome<T>[]; losers: Outcome<T>[] }> {
    const clients = Array.from({ length: AGENTS }, client);
    const outcomes = await Promise.all(
      clients.map(async (c, agent): Promise<Outcome<T>> => {
        try {
          return { agent, client: c, value: await call(c, `racer-${agent}`) };
        } catch (error) {
          // Anything but a refusal from the service (a crash, a 5xx) fails the test here.
          if (!(error instanceof BatonError) || error.status >= 500) throw error;
          return { agent, client: c, error };
        }
      }),
    );
    return { winners: outcomes.filter((o) => o.value !== undefined), losers: outcomes.filter((o) => o.error !== undefined) };
  }

  const taskEvents = async (taskId: string): Promise<StoredEvent[]> => (await client().events.page({ limit: 1000 })).items.filter((e) => e.data.taskId === taskId);
  const count = (events: StoredEvent[], type: StoredEvent['type']): number => events.filter((e) => e.type === type).length;

  it('20 agents acknowledge one handoff: one gets the child and the lease, 19 get 409 handoff_taken', async () => {
    const taskId = 'race-ack';
    const orchestrator = client();
    const made = await orchestrator.checkpoints.create(work(taskId, 'agent-a'));
    const { handoff } = await orchestrator.handoffs.start(made.id, { trigger: 'context_limit' });

    const { winners, losers } = await race((c, agentId) => c.handoffs.ack(handoff.id, { agentId }));
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(AGENTS - 1);
    for (const loser of losers) expect(loser.error).toMatchObject({ status: 409, code: 'handoff_taken', problem: { handoffId: handoff.id } });
    const won = winners[0]!;
    const agentId = `racer-${won.agent}`;
    expect(won.value!.checkpoint).toMatchObject({ parentId: made.id, agentId, iteration: 2, status: 'active' });
    expect(won.value!.lease).toMatchObject({ agentId, epoch: 1, status: 'active' });

    // Exactly one child checkpoint and one lease, and one set of events for them.
    const lineage = await orchestrator.checkpoints.lineage(made.id);
    expect(lineage.children.map((n) => n.id)).toEqual([won.value!.checkpoint.id]);
    expect((await orchestrator.checkpoints.history(taskId)).items.map((c) => c.id).sort()).toEqual([made.id, won.value!.checkpoint.id].sort());
    expect(await orchestrator.handoffs.get(handoff.id)).toMatchObject({ status: 'acknowledged', acknowledgedBy: { agentId }, childCheckpointId: won.value!.checkpoint.id });
    const task = await orchestrator.tasks.get(taskId);
    expect(task).toMatchObject({ state: 'working', epoch: 1, lease: { agentId, epoch: 1 }, latestCheckpointId: won.value!.checkpoint.id, openHandoff: null, checkpoints: 2 });
    const events = await taskEvents(taskId);
    expect([count(events, 'HANDOFF_ACKNOWLEDGED'), count(events, 'LEASE_ACQUIRED'), count(events, 'CHECKPOINT_CREATED'), count(events, 'CHECKPOINTS_LINKED')]).toEqual([1, 1, 2, 1]);
    expect(await orchestrator.tasks.verifyAudit(taskId)).toMatchObject({ ok: true });

    // Only the winner's client carries the epoch; a loser writing is told the task is leased.
    expect(won.client.leaseEpoch(taskId)).toBe(1);
    for (const loser of losers) expect(loser.client.leaseEpoch(taskId)).toBeUndefined();
    await expect(losers[0]!.client.checkpoints.create(work(taskId, 'loser'))).rejects.toMatchObject({ status: 428, code: 'lease_required' });
    expect((await won.client.checkpoints.patch(won.value!.checkpoint.id, { labels: { winner: true } }, { ifMatch: 1 })).version).toBe(2);
  });

  it('20 agents acquire one lease: one 201, 19 get 409 lease_held, the task is at epoch 1', async () => {
    const taskId = 'race-lease';
    const { winners, losers } = await race((c, agentId) => c.leases.acquire(taskId, { agentId }));
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(AGENTS - 1);
    for (const loser of losers) expect(loser.error).toMatchObject({ status: 409, code: 'lease_held' });
    const agentId = `racer-${winners[0]!.agent}`;
    expect(winners[0]!.value).toMatchObject({ taskId, agentId, epoch: 1, status: 'active' });

    expect(await client().tasks.get(taskId)).toMatchObject({ epoch: 1, lease: { agentId, epoch: 1, leaseId: winners[0]!.value!.leaseId } });
    expect(count(await taskEvents(taskId), 'LEASE_ACQUIRED')).toBe(1);
    expect(losers.filter((l) => l.client.leaseEpoch(taskId) !== undefined)).toEqual([]);
  });

  it('20 agents complete one recovery: one gets the lease, 19 get 409 recovery_taken', async () => {
    const taskId = 'race-recovery';
    const orchestrator = client();
    const made = await orchestrator.checkpoints.create(work(taskId, 'agent-crashed'));
    const { recovery } = await orchestrator.recoveries.start(taskId, { reason: 'agent crashed', failure: { kind: 'crash' } });
    expect(recovery).toMatchObject({ status: 'initiated', checkpointId: made.id });

    const { winners, losers } = await race((c, agentId) => c.recoveries.complete(recovery.id, { agentId }));
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(AGENTS - 1);
    for (const loser of losers) expect(loser.error).toMatchObject({ status: 409, code: 'recovery_taken', problem: { recoveryId: recovery.id } });
    const agentId = `racer-${winners[0]!.agent}`;
    // The recovery fenced the task at epoch 1; the one completion was granted epoch 2.
    expect(winners[0]!.value!.lease).toMatchObject({ agentId, epoch: 2 });
    expect(await orchestrator.recoveries.get(recovery.id)).toMatchObject({ status: 'completed', agentId });
    expect(await orchestrator.tasks.get(taskId)).toMatchObject({ epoch: 2, lease: { agentId, epoch: 2 } });
    const events = await taskEvents(taskId);
    expect([count(events, 'RECOVERY_COMPLETED'), count(events, 'LEASE_ACQUIRED')]).toEqual([1, 1]);
    expect(winners[0]!.client.leaseEpoch(taskId)).toBe(2);
  });
});
