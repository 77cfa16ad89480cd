/**
 * saveRunState / loadRunState over a real Baton: what a saved run looks
 * like to someone reading the task, and a handoff of the task carrying a
 * paused run to another agent, which approves and finishes it while the
 * agent that handed off is fenced out.
 */
import { run } from '@openai/agents-core';
import { describe, expect, it } from 'vitest';
import { BatonError } from '../../src/client/index.js';
import { BatonSession, loadRunState, saveRunState } from '../../src/openai-agents/index.js';
import { releaseAgent } from '../../examples/openai-agents/agent.js';
import { batonServerPerTest, server } from './support.js';
import { corruptCheckpoint } from '../support/corrupt.js';

batonServerPerTest();

describe('saveRunState / loadRunState', () => {
  it('answers undefined for a task with no saved run', async () => {
    expect(await loadRunState(server().client(), releaseAgent(), 'nothing-here')).toBeUndefined();
  });

  it('saves a paused run as a checkpoint that says what it waits for', async () => {
    const client = server().client();
    const session = new BatonSession({ client, sessionId: 'paused' });
    const result = await run(releaseAgent(), 'Publish the note.', { session });
    const saved = await saveRunState(client, 'paused', result.state);
    expect(saved.labels).toMatchObject({ 'oa.kind': 'run-state', 'oa.agent': 'Release writer', 'oa.interruptions': 1 });
    expect(saved.executionState.blockedItems).toEqual([
      { id: 'call_publish', description: `Approve publish_note with ${JSON.stringify({ text: 'Leases for OpenAI Agents sessions.' })}`, blocker: 'waiting for a tool approval' },
    ]);
    const prompt = await client.checkpoints.resumePrompt(saved.id);
    expect(prompt.text).toContain('loadRunState');

    // Baton keeps exactly what the SDK serialized, hashed with the checkpoint.
    expect((saved.extensions.openaiAgents as { state: unknown }).state).toEqual(JSON.parse(result.state.toString()));
    const loaded = await loadRunState(client, releaseAgent(), 'paused');
    expect(loaded?.getInterruptions().map((item) => item.name)).toEqual(['publish_note']);
  });

  it('links each save to the one before, so lineage and the recovery point follow the run', async () => {
    const client = server().client();
    const session = new BatonSession({ client, sessionId: 'linked' });
    const agent = releaseAgent();
    const first = await run(agent, 'Publish the note.', { session });
    const one = await saveRunState(client, 'linked', first.state);
    first.state.approve(first.interruptions[0]!);
    const two = await saveRunState(client, 'linked', first.state);
    expect(two.parentId).toBe(one.id);
    expect(two.recovery.lastSuccessfulState).toBe(one.id);
    expect((await client.recoveries.point('linked')).checkpoint.id).toBe(two.id);
  });

  it('loads the newest state that verifies when a newer one fails Baton’s hash check', async () => {
    const client = server().client();
    const agent = releaseAgent();
    const paused = await run(agent, 'Publish the note.', { session: new BatonSession({ client, sessionId: 'damaged-run' }) });
    await saveRunState(client, 'damaged-run', paused.state);
    paused.state.approve(paused.interruptions[0]!);
    const approved = await saveRunState(client, 'damaged-run', paused.state);
    await corruptCheckpoint(server().t.store, approved);
    // The approval was in the damaged checkpoint: the run is back to waiting for it, as the recovery point says.
    const loaded = await loadRunState(client, releaseAgent(), 'damaged-run');
    expect(loaded?.getInterruptions().map((item) => item.name)).toEqual(['publish_note']);
    expect((await client.recoveries.point('damaged-run')).skipped).toContain(approved.id);
  });

  it('carries a paused run through a handoff of its task to another agent, who approves and finishes it', async () => {
    const clientA = server().client();
    await clientA.leases.acquire('handed-run', { agentId: 'agent-a' });
    const sessionA = new BatonSession({ client: clientA, sessionId: 'handed-run', agentId: 'agent-a' });
    const paused = await run(releaseAgent(), 'Publish the note.', { session: sessionA });
    const saved = await saveRunState(clientA, 'handed-run', paused.state, { agentId: 'agent-a' });
    const { handoff, continuationPrompt } = await clientA.handoffs.start(saved.id, { trigger: 'explicit', toAgentId: 'agent-b', note: 'Needs a release manager to approve the publish.' });
    expect(continuationPrompt).toContain('loadRunState');

    const clientB = server().client();
    const { checkpoint: child } = await clientB.handoffs.ack(handoff.id, { agentId: 'agent-b' });
    const agentB = releaseAgent();
    const state = await loadRunState(clientB, agentB, 'handed-run');
    expect(state?.getInterruptions().map((item) => item.name)).toEqual(['publish_note']);
    state!.approve(state!.getInterruptions()[0]!);
    const sessionB = new BatonSession({ client: clientB, sessionId: 'handed-run', agentId: 'agent-b' });
    const finished = await run(agentB, state!, { session: sessionB });
    expect(finished.finalOutput).toBe('Done, published: Leases for OpenAI Agents sessions.');
    const last = await saveRunState(clientB, 'handed-run', finished.state, { agentId: 'agent-b' });
    expect(last.parentId).toBe(child.id);
    expect(last.executionState.phase).toBe('complete');

    // Agent A's lease was superseded by the handoff: its saves are refused.
    const refused = await saveRunState(clientA, 'handed-run', paused.state).catch((error: unknown) => error);
    expect((refused as BatonError).code).toBe('lease_superseded');
    expect((await sessionB.getItems()).map((item) => item.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_result', 'message']);
    expect((await server().client({ who: 'auditor' }).tasks.verifyAudit('handed-run')).ok).toBe(true);
  });
});
