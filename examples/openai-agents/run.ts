/**
 * An OpenAI Agents run whose session and paused state live in Baton, in
 * three steps, each its own process:
 *
 *   BATON_URL=http://127.0.0.1:7070 BATON_TOKEN=… tsx examples/openai-agents/run.ts start   <session>
 *   BATON_URL=http://127.0.0.1:7070 BATON_TOKEN=… tsx examples/openai-agents/run.ts approve <session>
 *   BATON_URL=http://127.0.0.1:7070 BATON_TOKEN=… tsx examples/openai-agents/run.ts resume  <session>
 *
 * `start` runs the agent until its tool asks for approval, saves the run
 * state in the session's Baton task and exits. `approve`, with nothing of
 * the first process in memory, loads the state, approves the tool call,
 * saves the approved state, and finishes the run. Should that process die
 * on the way (kill -9), `resume` loads the approved state and finishes the
 * run without asking again. Each prints one JSON line.
 */
import { run } from '@openai/agents-core';
import { BatonClient } from 'baton/client';
import { BatonSession, loadRunState, saveRunState } from 'baton/openai-agents';
import { releaseAgent } from './agent.js';

const [mode, sessionId] = process.argv.slice(2);
if (!['start', 'approve', 'resume'].includes(mode ?? '') || !sessionId) {
  console.error('usage: run.ts start|approve|resume <session>');
  process.exit(2);
}
const client = new BatonClient({ baseUrl: process.env.BATON_URL ?? 'http://127.0.0.1:7070', ...(process.env.BATON_TOKEN ? { token: process.env.BATON_TOKEN } : {}) });
const session = new BatonSession({ client, sessionId });
const agent = releaseAgent({
  async onPublish() {
    console.log(JSON.stringify({ publishing: true }));
    // Stands for a tool slow enough for its process to be killed while it runs.
    if (process.env.EXAMPLE_HANG_IN_TOOL === '1') await new Promise(() => setInterval(() => undefined, 1_000));
  },
});

if (mode === 'start') {
  const result = await run(agent, 'Publish the release note for this week.', { session });
  await saveRunState(client, sessionId, result.state);
  console.log(JSON.stringify({ mode, interruptions: result.interruptions.map((item) => ({ tool: item.name, arguments: item.arguments })) }));
} else {
  const state = await loadRunState(client, agent, sessionId);
  if (state === undefined) throw new Error(`No run state saved for session ${sessionId}.`);
  if (mode === 'approve') {
    for (const item of state.getInterruptions()) state.approve(item);
    // The approval is saved before the tool runs, so a crash from here on does not lose it.
    await saveRunState(client, sessionId, state);
  }
  const result = await run(agent, state, { session });
  await saveRunState(client, sessionId, result.state);
  const items = await session.getItems();
  const verified = await client.tasks.verifyAudit(sessionId);
  console.log(JSON.stringify({ mode, finalOutput: result.finalOutput, items: items.map((item) => item.type ?? 'message'), auditVerified: verified.ok }));
}
