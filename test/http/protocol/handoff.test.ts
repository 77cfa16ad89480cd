/**
 * Handoff and acknowledgment (DESIGN §3): the final checkpoint in phase
 * handoff, the child a fresh agent resumes from with the work carried
 * forward, the lease one epoch up, and the refusals.
 */
import { describe, expect, it } from 'vitest';
import { checkpointBody, useTestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';
import { call, create, epoch, eventTypes, ok, tamper } from './helpers.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('handoff', () => {
  const app = useTestApp();

  it('finalizes the checkpoint in phase handoff, releases the lease and announces AGENT_HANDOFF', async () => {
    const t = app();
    const cp = await create(t, 'h-1', { blockedItems: undefined, contextSummary: { keyDecisions: [{ decision: 'use LMDB', rationale: 'embedded' }], constraints: ['no network'] } });
    const lease = await ok(t, 'POST', '/v1/tasks/h-1/lease', { agentId: 'agent-1', ttlMs: 60_000 }, {}, 201);
    const res = await ok(t, 'POST', `/v1/checkpoints/${cp.id}/handoff`, { trigger: 'context_limit', toAgentType: 'implementation', contextUtilization: 0.93, note: 'context full' }, { ...epoch(1), traceparent: TRACEPARENT }, 201);
    expect(res.checkpoint).toMatchObject({ id: cp.id, version: 2, status: 'finalized', finalStatus: 'handoff', executionState: { phase: 'handoff' }, metrics: { contextUtilization: 0.93 } });
    expect(res.handoff).toMatchObject({ status: 'pending', taskId: 'h-1', checkpointId: cp.id, fromAgentId: 'agent-1', fromPhase: 'implementing', trigger: 'context_limit', traceparent: TRACEPARENT });
    // The next agent gets the whole context: the resume prompt in the phase the work was in, the own prompt and the note inside.
    expect(res.continuationPrompt).toEqual(expect.stringContaining('Phase: implementing.'));
    expect(res.continuationPrompt).toEqual(expect.stringContaining('Continue with p1.'));
    expect(res.continuationPrompt).toEqual(expect.stringContaining('context full'));
    expect(res.continuationPrompt).not.toEqual(expect.stringContaining('Phase: handoff.'));
    const handoff = res.handoff as Json;
    expect(await ok(t, 'GET', `/v1/handoffs/${handoff.id}`)).toEqual(handoff);
    expectProblem(await call(t, 'POST', `/v1/leases/${lease.leaseId}/renew`, {}), 409, 'lease_released');
    expect(await ok(t, 'GET', '/v1/tasks/h-1')).toMatchObject({ state: 'handing-off', lease: null, openHandoff: { id: handoff.id } });
    expect(await eventTypes(t, 'h-1')).toEqual(['CHECKPOINT_CREATED', 'LEASE_ACQUIRED', 'CHECKPOINT_FINALIZED', 'AGENT_HANDOFF']);
  });

  it('acknowledging creates the linked child with the work carried forward and grants a higher epoch', async () => {
    const t = app();
    const cp = await create(t, 'h-2', { contextSummary: { keyDecisions: [{ decision: 'use LMDB', rationale: 'embedded' }], constraints: ['no network'] }, codeVersion: 'git:abc' });
    await ok(t, 'POST', '/v1/tasks/h-2/lease', { agentId: 'agent-1', ttlMs: 60_000 }, {}, 201);
    const started = await ok(t, 'POST', `/v1/checkpoints/${cp.id}/handoff`, { trigger: 'phase_complete' }, epoch(1), 201);
    const handoffId = (started.handoff as Json).id;
    const ack = await ok(t, 'POST', `/v1/handoffs/${handoffId}/ack`, { agentId: 'agent-2', ttlMs: 30_000 });
    const child = ack.checkpoint as Json;
    const body = checkpointBody('h-2');
    expect(child).toMatchObject({
      taskId: 'h-2',
      agentId: 'agent-2',
      agentType: 'implementation',
      iteration: 2,
      version: 1,
      status: 'active',
      parentId: cp.id,
      codeVersion: 'git:abc',
      executionState: { phase: 'implementing', pendingItems: (body.executionState as Json).pendingItems, completedItems: (body.executionState as Json).completedItems, currentFocus: 'p1' },
      contextSummary: { keyDecisions: [{ decision: 'use LMDB', rationale: 'embedded' }], constraints: ['no network'] },
      recovery: { continuationPrompt: 'Continue with p1.', lastSuccessfulState: cp.id },
      extensions: { handoff: { handoffId, previousAgents: [{ agentId: 'agent-1', agentType: 'implementation', iteration: 1, checkpointId: cp.id, trigger: 'phase_complete' }] } },
    });
    expect(ack.lease).toMatchObject({ agentId: 'agent-2', epoch: 2, ttlMs: 30_000, status: 'active' });
    expect(ack.handoff).toMatchObject({ status: 'acknowledged', acknowledgedBy: { agentId: 'agent-2' }, childCheckpointId: child.id });
    const lineage = await ok(t, 'GET', `/v1/checkpoints/${child.id}/lineage`);
    expect((lineage.ancestors as Json[]).map((n) => n.id)).toEqual([cp.id]);
    expect(await ok(t, 'GET', '/v1/tasks/h-2')).toMatchObject({ state: 'working', epoch: 2, latestCheckpointId: child.id, openHandoff: null, lease: { agentId: 'agent-2', epoch: 2 } });
    expect(await eventTypes(t, 'h-2')).toEqual([
      'CHECKPOINT_CREATED',
      'LEASE_ACQUIRED',
      'CHECKPOINT_FINALIZED',
      'AGENT_HANDOFF',
      'CHECKPOINT_CREATED',
      'CHECKPOINTS_LINKED',
      'HANDOFF_ACKNOWLEDGED',
      'LEASE_ACQUIRED',
    ]);
    // The child's hash verifies like any checkpoint's, and the trail stays a chain.
    expect((await ok(t, 'GET', `/v1/checkpoints/${child.id}`)).compliance).toEqual(child.compliance);
    expect(await ok(t, 'GET', '/v1/tasks/h-2/audit/verify')).toMatchObject({ ok: true });
    const metrics = await call(t, 'GET', '/metrics');
    expect(metrics.body).toMatch(/^handoff_success_rate 1$/m);

    // The next handoff extends previousAgents.
    const second = await ok(t, 'POST', `/v1/checkpoints/${child.id}/handoff`, { trigger: 'explicit' }, epoch(2), 201);
    const grandchild = (await ok(t, 'POST', `/v1/handoffs/${(second.handoff as Json).id}/ack`, { agentId: 'agent-3' })).checkpoint as Json;
    expect(((grandchild.extensions as Json).handoff as Json).previousAgents).toMatchObject([{ agentId: 'agent-1' }, { agentId: 'agent-2', iteration: 2 }]);
    expect(grandchild.iteration).toBe(3);
  });

  it('answers the same agent acknowledging again the same, and refuses a different agent', async () => {
    const t = app();
    const cp = await create(t, 'h-3');
    const started = await ok(t, 'POST', `/v1/checkpoints/${cp.id}/handoff`, { trigger: 'explicit' }, {}, 201);
    const url = `/v1/handoffs/${(started.handoff as Json).id}/ack`;
    const first = await ok(t, 'POST', url, { agentId: 'agent-2' });
    const again = await ok(t, 'POST', url, { agentId: 'agent-2' });
    expect(again).toEqual(first);
    expectProblem(await call(t, 'POST', url, { agentId: 'agent-9' }), 409, 'handoff_taken');
    expect((await ok(t, 'GET', '/v1/tasks/h-3')).checkpoints).toBe(2);
  });

  it('refuses what cannot be handed off or acknowledged, each with its own code', async () => {
    const t = app();
    const done = await create(t, 'h-4');
    await ok(t, 'POST', `/v1/checkpoints/${done.id}/finalize`, { status: 'completed' });
    expectProblem(await call(t, 'POST', `/v1/checkpoints/${done.id}/handoff`, { trigger: 'explicit' }), 409, 'checkpoint_finalized');

    const broken = await create(t, 'h-5');
    await tamper(t, broken);
    expectProblem(await call(t, 'POST', `/v1/checkpoints/${broken.id}/handoff`, { trigger: 'explicit' }), 409, 'checkpoint_corrupted');

    const one = await create(t, 'h-6');
    const two = await create(t, 'h-6');
    const started = await ok(t, 'POST', `/v1/checkpoints/${one.id}/handoff`, { trigger: 'explicit', toAgentId: 'agent-7' }, {}, 201);
    expectProblem(await call(t, 'POST', `/v1/checkpoints/${two.id}/handoff`, { trigger: 'explicit' }), 409, 'handoff_pending');
    const url = `/v1/handoffs/${(started.handoff as Json).id}/ack`;
    expectProblem(await call(t, 'POST', url, { agentId: 'agent-8' }), 409, 'handoff_not_for_agent');
    await ok(t, 'POST', url, { agentId: 'agent-7' });

    expectProblem(await call(t, 'POST', `/v1/checkpoints/${one.id}/handoff`, { trigger: 'bored' }), 400, 'validation_failed');
    expectProblem(await call(t, 'POST', '/v1/handoffs/00000000-0000-7000-8000-000000000000/ack', { agentId: 'x' }), 404, 'not_found');
  });

  it('refuses an acknowledgment under another code version unless the agent accepts the change', async () => {
    const t = app();
    const cp = await create(t, 'h-7', { codeVersion: 'graph:v1' });
    const started = await ok(t, 'POST', `/v1/checkpoints/${cp.id}/handoff`, { trigger: 'explicit' }, {}, 201);
    const url = `/v1/handoffs/${(started.handoff as Json).id}/ack`;
    expectProblem(await call(t, 'POST', url, { agentId: 'agent-2', codeVersion: 'graph:v2' }), 409, 'code_version_mismatch');
    const ack = await ok(t, 'POST', url, { agentId: 'agent-2', codeVersion: 'graph:v2', acceptCodeChange: true });
    expect((ack.checkpoint as Json).codeVersion).toBe('graph:v2');
  });

  it('answers a resume prompt made from the checkpoint when it carries no continuation prompt of its own', async () => {
    const t = app();
    const cp = await create(t, 'h-9', { recovery: {} });
    const res = await ok(t, 'POST', `/v1/checkpoints/${cp.id}/handoff`, { trigger: 'context_limit' }, {}, 201);
    const prompt = String(res.continuationPrompt);
    expect(prompt).toContain('wire the CLI');
    expect(prompt).toContain('use LMDB');
    // The checkpoint's own resume prompt, but in the phase the work was in rather than `handoff`.
    const resume = await call(t, 'GET', `/v1/checkpoints/${cp.id}/resume-prompt`);
    expect(resume.body.replace('phase handoff', 'phase implementing').replace('Phase: handoff.', 'Phase: implementing.')).toBe(prompt);
    const fitted = await ok(t, 'POST', `/v1/checkpoints/${(await create(t, 'h-9b', { recovery: {} })).id}/handoff?maxTokens=40`, { trigger: 'context_limit' }, {}, 201);
    expect(String(fitted.continuationPrompt).length).toBeLessThan(prompt.length);
  });

  it('fences the handoff itself: a live lease needs its epoch', async () => {
    const t = app();
    const cp = await create(t, 'h-8');
    await ok(t, 'POST', '/v1/tasks/h-8/lease', { agentId: 'agent-1', ttlMs: 60_000 }, {}, 201);
    expectProblem(await call(t, 'POST', `/v1/checkpoints/${cp.id}/handoff`, { trigger: 'explicit' }), 428, 'lease_required');
  });
});
