/**
 * examples/a2a run as a user runs it: A2A servers (the SDK's request
 * handler behind its Express transport, each its own process) over one
 * real Baton, driven by the SDK's own client over HTTP. A task opened on
 * one replica is answered on another; after every server is killed, a new
 * one serves the task and lists it; Baton holds the task's state in A2A's
 * words and an audit chain that verifies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS } from '../support/app.js';
import { listen, type Listening } from '../client/support/server.js';
import { text } from '../../examples/a2a/agent.js';

let baton: Listening;
const replicas: ChildProcess[] = [];

beforeAll(async () => {
  baton = await listen();
});
afterAll(async () => {
  for (const child of replicas) child.kill('SIGKILL');
  await baton.close();
});

/** Starts examples/a2a/server.ts as its own process and answers a client of it. */
async function replica(name: string): Promise<{ child: ChildProcess; client: Client }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/a2a/server.ts'], {
    env: { ...process.env, BATON_URL: baton.url, BATON_TOKEN: TOKENS.writer, PORT: '0', REPLICA: name },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  replicas.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on('exit', (code) => reject(new Error(`replica ${name} exited with ${code}`)));
  });
  return { child, client: await new ClientFactory().createFromUrl(url) };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

function userMessage(said: string, task?: Task): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: task?.contextId ?? '',
    taskId: task?.id ?? '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: said }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

describe('A2A servers over one Baton', () => {
  it('serve each other’s tasks, and keep them across restarts', async () => {
    const a = await replica('a');
    const b = await replica('b');

    const opened = (await a.client.sendMessage({ tenant: '', message: userMessage('The printer on floor 3 is jammed'), configuration: undefined, metadata: undefined })) as Task;
    expect(opened.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(text(opened.status?.message)).toBe('Which priority for "The printer on floor 3 is jammed"?');

    // Replica b knows the task only from Baton, and carries it on.
    const filed = (await b.client.sendMessage({ tenant: '', message: userMessage('high', opened), configuration: undefined, metadata: undefined })) as Task;
    expect(filed.id).toBe(opened.id);
    expect(filed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(filed.artifacts.map((artifact) => text({ parts: artifact.parts } as Message))).toEqual(['high: The printer on floor 3 is jammed (opened by a, filed by b)']);

    await stop(a.child);
    await stop(b.child);
    const c = await replica('c');
    const served = await c.client.getTask({ tenant: '', id: opened.id, historyLength: undefined });
    expect(served.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(served.artifacts).toEqual(filed.artifacts);
    expect(served.history.map((message) => text(message))).toEqual(['The printer on floor 3 is jammed', 'Which priority for "The printer on floor 3 is jammed"?', 'high', 'Filed.']);
    const listed = await c.client.listTasks({ tenant: '', contextId: opened.contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined });
    expect(listed.tasks.map((task) => task.id)).toEqual([opened.id]);

    // In Baton the A2A task is a task of the same id, its state in A2A's words, each save an audited revision.
    const info = await baton.client().tasks.get(opened.id);
    expect(info.state).toBe('completed');
    const auditor = baton.client({ who: 'auditor' });
    const actions = (await auditor.tasks.audit(opened.id, { limit: 1000 })).items.map((entry) => entry.action);
    expect(actions[0]).toBe('checkpoint.created');
    expect(actions.filter((action) => action === 'checkpoint.updated').length).toBeGreaterThanOrEqual(3);
    expect(actions.filter((action) => action === 'task.state')).toHaveLength(3);
    expect((await auditor.tasks.verifyAudit(opened.id)).ok).toBe(true);
  }, 120_000);
});
