/**
 * The example's two halves, each its own process:
 *
 *   BATON_URL=http://127.0.0.1:7070 BATON_TOKEN=… tsx examples/langgraph/run.ts start  <thread>
 *   BATON_URL=http://127.0.0.1:7070 BATON_TOKEN=… tsx examples/langgraph/run.ts resume <thread> approve
 *
 * `start` runs the graph until it asks for approval and exits; `resume`, in a
 * new process with nothing in memory, picks the thread up from Baton, feeds
 * the answer in, finishes, and prints the thread's history and Baton's audit
 * trail of its task. Each prints one JSON line.
 */
import { Command } from '@langchain/langgraph';
import { BatonClient } from 'baton/client';
import { BatonSaver } from 'baton/langgraph';
import { releaseNoteGraph } from './graph.js';

const [mode, threadId, answer] = process.argv.slice(2);
if ((mode !== 'start' && mode !== 'resume') || !threadId) {
  console.error('usage: run.ts start <thread> | run.ts resume <thread> <answer>');
  process.exit(2);
}
const client = new BatonClient({ baseUrl: process.env.BATON_URL ?? 'http://127.0.0.1:7070', ...(process.env.BATON_TOKEN ? { token: process.env.BATON_TOKEN } : {}) });
const saver = new BatonSaver({ client });
const graph = releaseNoteGraph(saver);
const config = { configurable: { thread_id: threadId } };

if (mode === 'start') {
  await graph.invoke({ topic: 'leases for LangGraph threads' }, config);
  const state = await graph.getState(config);
  console.log(JSON.stringify({ mode, next: state.next, interrupts: state.tasks.flatMap((t) => t.interrupts.map((i) => i.value)) }));
} else {
  const result = await graph.invoke(new Command({ resume: answer ?? 'approve' }), config);
  const history: string[] = [];
  for await (const snapshot of graph.getStateHistory(config)) history.push(`${snapshot.metadata?.source}:${snapshot.metadata?.step}`);
  const taskId = `${saver.taskPrefix}${threadId}`;
  const audit = await client.tasks.audit(taskId, { limit: 1000 });
  const verified = await client.tasks.verifyAudit(taskId);
  console.log(JSON.stringify({ mode, log: result.log, history, audit: audit.items.map((e) => e.action), auditVerified: verified.ok }));
}
