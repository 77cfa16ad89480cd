/**
 * Issue 7's first "Done when", over a real socket and through the typed
 * client: one task through four agents. A works, hits its context limit and
 * hands off; B acknowledges, works, then crashes (stops renewing its 300 ms
 * lease); the sweeper's LEASE_EXPIRED reaches the orchestrator's live event
 * stream, which starts a recovery from the recovery point; C completes it
 * with a higher epoch, and B's late writes are refused with
 * `lease_superseded`; C is reassigned and hands off explicitly to D, who
 * acknowledges. Then the lineage, the audit chain, the events and the leases
 * must tell exactly that story, and the task's state is checked at each step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatonClient, Checkpoint, StoredEvent, TaskInfo } from '../../../src/client/index.js';
import { Collector } from '../../client/support/collector.js';
import { listen, work, type Listening } from '../../client/support/server.js';

const TASK = 'e2e-parser';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** What the story checks of a task at each step. */
function summary(info: TaskInfo): Record<string, unknown> {
  return {
    state: info.state,
    holder: info.lease ? `${info.lease.agentId}@${info.lease.epoch}` : null,
    epoch: info.epoch,
    latest: info.latestCheckpointId,
    openHandoff: info.openHandoff?.id ?? null,
  };
}

describe('one task through four agents: context-limit handoff, crash and recovery, reassignment', () => {
  let server: Listening;

  beforeAll(async () => {
    // A fast sweeper, so a 300 ms lease is announced as expired within about 50 ms of running out.
    server = await listen({ leaseSweepMs: 50 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('tells exactly that story', { timeout: 30_000 }, async () => {
    const orchestrator = server.client();
    const [a, b, c, d] = Array.from({ length: 4 }, () => server.client()) as [BatonClient, BatonClient, BatonClient, BatonClient];
    const task = async (): Promise<Record<string, unknown>> => summary(await orchestrator.tasks.get(TASK));

    // Agent A takes the task and works.
    const leaseA = await a.leases.acquire(TASK, { agentId: 'agent-a' });
    const first = (await orchestrator.events.page({ limit: 1000 })).items;
    expect(first.map((e) => e.type)).toEqual(['LEASE_ACQUIRED']);
    // The orchestrator watches the live feed from here on.
    const feed = new Collector(orchestrator, { after: first[0]!.cursor });
    try {
      const a1 = await a.checkpoints.create(work(TASK, 'agent-a', { executionState: { phase: 'planning', pendingItems: ['design the grammar', 'write the parser'] } }));
      await a.checkpoints.patch(a1.id, { executionState: { phase: 'implementing', completedItems: ['design the grammar'], pendingItems: ['write the parser'] } }, { ifMatch: 1 });
      const a2 = await a.checkpoints.create(work(TASK, 'agent-a', { parentId: a1.id, iteration: 2, metrics: { contextUtilization: 0.93 } }));
      expect(await task()).toEqual({ state: 'working', holder: 'agent-a@1', epoch: 1, latest: a2.id, openHandoff: null });

      // A hits its context limit and hands off.
      const handedA = await a.handoffs.start(a2.id, { trigger: 'context_limit', contextUtilization: 0.97, note: 'context window nearly full' }, { traceparent: TRACEPARENT });
      expect(handedA.checkpoint).toMatchObject({ id: a2.id, status: 'finalized', finalStatus: 'handoff', executionState: { phase: 'handoff' } });
      expect(handedA.continuationPrompt).toEqual(expect.stringContaining('Continue with the parser.'));
      expect(handedA.continuationPrompt).toEqual(expect.stringContaining('context window nearly full'));
      expect(await task()).toEqual({ state: 'handing-off', holder: null, epoch: 1, latest: a2.id, openHandoff: handedA.handoff.id });

      // B acknowledges: the child checkpoint and the lease; then works, renewing once down to 300 ms.
      const ackB = await b.handoffs.ack(handedA.handoff.id, { agentId: 'agent-b', ttlMs: 5_000 });
      const b1 = ackB.checkpoint;
      expect(b1).toMatchObject({ parentId: a2.id, iteration: 3, agentId: 'agent-b', status: 'active', executionState: { phase: 'implementing', pendingItems: ['write the parser'] } });
      expect(ackB.handoff).toMatchObject({ status: 'acknowledged', trigger: 'context_limit', traceparent: TRACEPARENT, childCheckpointId: b1.id });
      expect(ackB.lease).toMatchObject({ agentId: 'agent-b', epoch: 2, status: 'active' });
      expect(await task()).toEqual({ state: 'working', holder: 'agent-b@2', epoch: 2, latest: b1.id, openHandoff: null });
      await b.leases.renew(ackB.lease.leaseId, 300);
      await b.checkpoints.patch(b1.id, { executionState: { completedItems: ['design the grammar', 'tokenizer'] } }, { ifMatch: 1 });

      // B crashes: it stops renewing. The orchestrator hears LEASE_EXPIRED on its live feed.
      await feed.until((events) => events.some((e) => e.type === 'LEASE_EXPIRED'), 'LEASE_EXPIRED');
      const expired = feed.events.find((e) => e.type === 'LEASE_EXPIRED')!;
      expect(expired.data).toMatchObject({ taskId: TASK, leaseId: ackB.lease.leaseId, agentId: 'agent-b', epoch: 2 });
      expect(await task()).toEqual({ state: 'working', holder: null, epoch: 3, latest: b1.id, openHandoff: null });

      // The orchestrator recovers from the recovery point: B's last checkpoint, which verifies.
      const point = await orchestrator.recoveries.point(TASK);
      expect(point).toMatchObject({ taskId: TASK, skipped: [], checkpoint: { id: b1.id, version: 2 } });
      const started = await orchestrator.recoveries.start(TASK, { reason: 'lease expired unrenewed', failure: { kind: 'crash', message: 'agent-b stopped renewing' } });
      expect(started.recovery).toMatchObject({ status: 'initiated', checkpointId: b1.id });
      expect(started.checkpoint?.id).toBe(b1.id);
      // Starting the recovery fenced the task at once: no lease is live, yet B's late write is refused.
      await expect(b.checkpoints.patch(b1.id, { labels: { late: 1 } }, { ifMatch: 2 })).rejects.toMatchObject({ status: 409, code: 'lease_superseded', problem: { epoch: 4 } });
      expect(await task()).toEqual({ state: 'working', holder: null, epoch: 4, latest: b1.id, openHandoff: null });

      // C completes the recovery and gets the task with a higher epoch; B, woken up late, is refused again.
      const doneC = await c.recoveries.complete(started.recovery.id, { agentId: 'agent-c' });
      expect(doneC.recovery).toMatchObject({ status: 'completed', agentId: 'agent-c' });
      expect(doneC.lease).toMatchObject({ agentId: 'agent-c', epoch: 5 });
      const lateB = await b.checkpoints.patch(b1.id, { executionState: { currentFocus: 'overwrite' } }, { ifMatch: 2 }).catch((e: unknown) => e);
      expect(lateB).toMatchObject({ status: 409, code: 'lease_superseded', problem: { epoch: 5 } });
      await expect(b.checkpoints.create(work(TASK, 'agent-b'))).rejects.toMatchObject({ status: 409, code: 'lease_superseded' });
      expect((await orchestrator.checkpoints.get(b1.id)).version).toBe(2);
      expect(await task()).toEqual({ state: 'working', holder: 'agent-c@5', epoch: 5, latest: b1.id, openHandoff: null });

      const c1 = await c.checkpoints.create(work(TASK, 'agent-c', { parentId: b1.id, iteration: 4, recovery: { lastSuccessfulState: b1.id, continuationPrompt: 'Finish the parser.' } }));
      await c.checkpoints.patch(c1.id, { executionState: { completedItems: ['design the grammar', 'tokenizer', 'parser'] } }, { ifMatch: 1 });

      // C is reassigned: it hands off explicitly to D. B tries to take it and is refused; D acknowledges.
      const handedC = await c.handoffs.start(c1.id, { trigger: 'explicit', toAgentId: 'agent-d', note: 'reassigned to the reviewer' });
      expect(await task()).toEqual({ state: 'handing-off', holder: null, epoch: 5, latest: c1.id, openHandoff: handedC.handoff.id });
      await expect(b.handoffs.ack(handedC.handoff.id, { agentId: 'agent-b' })).rejects.toMatchObject({ status: 409, code: 'handoff_not_for_agent' });
      const ackD = await d.handoffs.ack(handedC.handoff.id, { agentId: 'agent-d', agentType: 'reviewer' });
      const d1 = ackD.checkpoint;
      expect(ackD.lease).toMatchObject({ agentId: 'agent-d', epoch: 6 });
      expect(d1).toMatchObject({ parentId: c1.id, iteration: 5, agentId: 'agent-d', agentType: 'reviewer', recovery: { continuationPrompt: 'Finish the parser.' } });
      expect(await task()).toEqual({ state: 'working', holder: 'agent-d@6', epoch: 6, latest: d1.id, openHandoff: null });

      // D finishes the task and lets go of it.
      await d.checkpoints.patch(d1.id, { executionState: { phase: 'reviewing' } }, { ifMatch: 1 });
      const final = await d.checkpoints.finalize(d1.id, { status: 'completed' });
      await d.leases.release(ackD.lease.leaseId);
      const finished = await orchestrator.tasks.get(TASK);
      expect(summary(finished)).toEqual({ state: 'completed', holder: null, epoch: 6, latest: d1.id, openHandoff: null });
      expect(finished).toMatchObject({ finished: true, success: true, paused: false, blocked: null, recoveryPointId: d1.id, checkpoints: 5 });

      await feed.until((events) => events.some((e) => e.type === 'CHECKPOINT_FINALIZED' && e.subject === d1.id), 'D’s finalization');
      await feed.stop();

      // The lineage: from D's checkpoint back through C's and B's to A's two.
      const lineage = await orchestrator.checkpoints.lineage(d1.id);
      expect(lineage.children).toEqual([]);
      expect(lineage.ancestors.map((n) => [n.id, n.agentId, n.iteration, n.status, n.phase])).toEqual([
        [c1.id, 'agent-c', 4, 'finalized', 'handoff'],
        [b1.id, 'agent-b', 3, 'active', 'implementing'],
        [a2.id, 'agent-a', 2, 'finalized', 'handoff'],
        [a1.id, 'agent-a', 1, 'active', 'implementing'],
      ]);
      // Each handoff's child names the agents before it, as far as its parent knew them: B's names A; D's
      // names C only, because C resumed after the recovery in a checkpoint of its own (the lineage above links them all).
      const handedOffBefore = (checkpoint: Checkpoint): string[][] =>
        (checkpoint.extensions.handoff as { previousAgents: { agentId: string; trigger: string; checkpointId: string }[] }).previousAgents.map((p) => [p.agentId, p.trigger, p.checkpointId]);
      expect(handedOffBefore(b1)).toEqual([['agent-a', 'context_limit', a2.id]]);
      expect(handedOffBefore(final)).toEqual([['agent-c', 'explicit', c1.id]]);

      // The audit chain verifies, and its entries are the story, in order.
      const verified = await orchestrator.tasks.verifyAudit(TASK);
      const audit = (await orchestrator.tasks.audit(TASK, { limit: 1000 })).items;
      expect(verified).toEqual({ ok: true, entries: audit.length });
      expect(audit.map((e) => e.seq)).toEqual(audit.map((_, i) => i + 1));
      for (let i = 1; i < audit.length; i++) expect(audit[i]!.prevHash).toBe(audit[i - 1]!.hash);
      const lease = (id: string) => (e: { details?: Record<string, unknown> }) => e.details?.leaseId === id;
      expect(audit.map((e) => [e.action, e.actor.agentId ?? null])).toEqual([
        ['lease.acquired', 'agent-a'],
        ['checkpoint.created', 'agent-a'],
        ['checkpoint.updated', 'agent-a'],
        ['checkpoint.created', 'agent-a'],
        ['lease.released', 'agent-a'],
        ['handoff.initiated', 'agent-a'],
        ['checkpoint.created', 'agent-b'],
        ['handoff.acknowledged', 'agent-b'],
        ['lease.acquired', 'agent-b'],
        ['lease.renewed', 'agent-b'],
        ['checkpoint.updated', 'agent-b'],
        ['lease.expired', 'agent-b'],
        ['recovery.initiated', null],
        ['recovery.completed', 'agent-c'],
        ['lease.acquired', 'agent-c'],
        ['checkpoint.created', 'agent-c'],
        ['checkpoint.updated', 'agent-c'],
        ['lease.released', 'agent-c'],
        ['handoff.initiated', 'agent-c'],
        ['checkpoint.created', 'agent-d'],
        ['handoff.acknowledged', 'agent-d'],
        ['lease.acquired', 'agent-d'],
        ['checkpoint.updated', 'agent-d'],
        ['checkpoint.finalized', 'agent-d'],
        ['lease.released', 'agent-d'],
      ]);

      // The leases: epochs strictly increasing A < B < C < D, and how each ended.
      const leases = [leaseA.leaseId, ackB.lease.leaseId, doneC.lease.leaseId, ackD.lease.leaseId];
      expect(leases.map((id) => audit.find((e) => lease(id)(e) && e.action === 'lease.acquired')!.details!.epoch)).toEqual([1, 2, 5, 6]);
      expect(leases.map((id) => audit.filter(lease(id)).at(-1)!.action)).toEqual(['lease.released', 'lease.expired', 'lease.released', 'lease.released']);
      // Nobody revives an ended lease: renewing each is refused with the reason it ended.
      const renewals = await Promise.all([a, b, c, d].map((agent, i) => agent.leases.renew(leases[i]!).catch((e: unknown) => e)));
      expect(renewals.map((r) => (r as { code?: string }).code)).toEqual(['lease_released', 'lease_expired', 'lease_released', 'lease_released']);

      // The events: exactly this sequence for the task, in commit order, none missing; the live feed saw the same.
      const events: StoredEvent[] = [];
      for (let cursor: string | undefined, page = 0; page === 0 || cursor !== undefined; page++) {
        const listed = await orchestrator.events.page({ limit: 1000, ...(cursor ? { after: cursor } : {}) });
        events.push(...listed.items);
        cursor = listed.nextCursor;
      }
      const mine = events.filter((e) => e.data.taskId === TASK);
      expect(mine).toHaveLength(events.length);
      expect(mine.map((e) => e.type)).toEqual([
        'LEASE_ACQUIRED',
        'CHECKPOINT_CREATED',
        'CHECKPOINT_UPDATED',
        'CHECKPOINT_CREATED',
        'CHECKPOINTS_LINKED',
        'CHECKPOINT_FINALIZED',
        'AGENT_HANDOFF',
        'CHECKPOINT_CREATED',
        'CHECKPOINTS_LINKED',
        'HANDOFF_ACKNOWLEDGED',
        'LEASE_ACQUIRED',
        'CHECKPOINT_UPDATED',
        'LEASE_EXPIRED',
        'RECOVERY_INITIATED',
        'RECOVERY_COMPLETED',
        'LEASE_ACQUIRED',
        'CHECKPOINT_CREATED',
        'CHECKPOINTS_LINKED',
        'CHECKPOINT_UPDATED',
        'CHECKPOINT_FINALIZED',
        'AGENT_HANDOFF',
        'CHECKPOINT_CREATED',
        'CHECKPOINTS_LINKED',
        'HANDOFF_ACKNOWLEDGED',
        'LEASE_ACQUIRED',
        'CHECKPOINT_UPDATED',
        'CHECKPOINT_FINALIZED',
      ]);
      expect(mine.filter((e) => e.type === 'CHECKPOINT_CREATED').map((e) => e.subject)).toEqual([a1.id, a2.id, b1.id, c1.id, d1.id]);
      expect(mine.filter((e) => e.type === 'LEASE_ACQUIRED').map((e) => [e.data.agentId, e.data.epoch])).toEqual([
        ['agent-a', 1],
        ['agent-b', 2],
        ['agent-c', 5],
        ['agent-d', 6],
      ]);
      expect(mine.filter((e) => e.type === 'AGENT_HANDOFF').map((e) => [e.data.fromAgentId, e.data.trigger, e.data.toAgentId ?? null])).toEqual([
        ['agent-a', 'context_limit', null],
        ['agent-c', 'explicit', 'agent-d'],
      ]);
      const cursors = mine.map((e) => e.cursor);
      expect([...cursors].sort()).toEqual(cursors);
      expect(new Set(mine.map((e) => e.id)).size).toBe(mine.length);
      expect(feed.events.map((e) => e.cursor)).toEqual(cursors.slice(1));
    } finally {
      await feed.stop();
    }
  });
});
