/**
 * examples/langgraph-api run as a user runs it: LangGraph API servers (the
 * embed server of @langchain/langgraph-api over BatonSaver and
 * BatonThreadSaver, each its own process) over one real Baton, driven by the
 * official @langchain/langgraph-sdk client. A run stopped for approval on
 * one server is resumed on another after the first was killed; threads,
 * their metadata and their state are all read back from Baton.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatonError } from '../../src/client/index.js';
import { TOKENS } from '../support/app.js';
import { listen, type Listening } from '../client/support/server.js';

let baton: Listening;
const servers: ChildProcess[] = [];

beforeAll(async () => {
  baton = await listen({ writerPurge: '1' });
});
afterAll(async () => {
  for (const child of servers) child.kill('SIGKILL');
  await baton.close();
});

async function server(): Promise<{ child: ChildProcess; client: Client }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/langgraph-api/server.ts'], {
    env: { ...process.env, BATON_URL: baton.url, BATON_TOKEN: TOKENS.writer, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  servers.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
  return { child, client: new Client({ apiUrl: url }) };
}

/** Runs the graph on the thread through the embed server's streaming route (the only one it has), and answers the thread's state after it. */
async function run(client: Client, threadId: string, payload: { input?: Record<string, unknown>; command?: { resume: string } }): Promise<Record<string, unknown>> {
  for await (const chunk of client.runs.stream(threadId, 'release_notes', { ...payload, streamMode: 'values' })) {
    if (chunk.event === 'error') throw new Error(JSON.stringify(chunk.data));
  }
  return (await client.threads.getState(threadId)).values as Record<string, unknown>;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('a LangGraph API server over Baton', () => {
  it('resumes on a new server a run that stopped for approval on one that was killed', async () => {
    const first = await server();
    const thread = await first.client.threads.create({ metadata: { team: 'docs' } });
    const stopped = await run(first.client, thread.thread_id, { input: { topic: 'leases for LangGraph threads' } });
    expect(stopped.log).toEqual(['drafted']);
    const waiting = await first.client.threads.getState(thread.thread_id);
    expect(waiting.next).toEqual(['review']);

    // A second server, up while the first still runs, sees the thread too.
    const second = await server();
    expect((await second.client.threads.get(thread.thread_id)).metadata).toMatchObject({ team: 'docs', graph_id: 'release_notes' });
    await kill(first.child);

    const finished = await run(second.client, thread.thread_id, { command: { resume: 'approve' } });
    expect(finished.log).toEqual(['drafted', 'reviewed: approve', 'published']);
    const history = await second.client.threads.getHistory(thread.thread_id);
    expect(history.length).toBeGreaterThanOrEqual(4);
    const found = await second.client.threads.search({ metadata: { team: 'docs' } });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);

    // In Baton the thread is a task: its checkpoints and its record, on an audit chain that verifies.
    const auditor = baton.client({ who: 'auditor' });
    expect((await auditor.tasks.verifyAudit(`langgraph:${thread.thread_id}`)).ok).toBe(true);

    await second.client.threads.delete(thread.thread_id);
    expect(await second.client.threads.search({ metadata: { team: 'docs' } })).toEqual([]);
    const gone = await baton.client().checkpoints.history(`langgraph:${thread.thread_id}`).catch((error: unknown) => error);
    expect(gone instanceof BatonError ? gone.status : (gone as { items: unknown[] }).items.length).toSatisfy((value: unknown) => value === 404 || value === 0);
  }, 180_000);
});
