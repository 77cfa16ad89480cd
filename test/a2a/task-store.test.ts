/**
 * BatonTaskStore beyond the SDK's own tests (test/a2a/ported): what Baton
 * adds, and what a store shared across the network must get right. Stores
 * with clients of their own stand for replicas.
 */
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BatonTaskStore } from '../../src/a2a/index.js';
import { startBaton, type Baton } from './support.js';
import { corruptCheckpoint } from '../support/corrupt.js';

let baton: Baton;
beforeEach(async () => {
  baton = await startBaton();
});
afterEach(async () => {
  await baton.close();
});

const context = new ServerCallContext();

function task(id: string, state: TaskState, overrides: Partial<Task> = {}): Task {
  return { id, contextId: 'ctx', status: { state, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [], metadata: undefined, ...overrides };
}

describe('BatonTaskStore', () => {
  it('keeps one checkpoint per task when replicas save it at once, with the last save read back', async () => {
    const replicas = Array.from({ length: 4 }, () => new BatonTaskStore({ client: baton.client() }));
    await Promise.all(replicas.map((store, i) => store.save(task('shared', TaskState.TASK_STATE_WORKING, { metadata: { by: i } }), context)));
    await replicas[0]!.save(task('shared', TaskState.TASK_STATE_COMPLETED, { metadata: { by: 'last' } }), context);
    for (const store of replicas) expect((await store.load('shared', context))?.metadata).toEqual({ by: 'last' });
    const found = await baton.client().checkpoints.search({ taskId: 'shared', labels: { 'a2a.kind': 'task' } });
    expect(found.items).toHaveLength(1);
    expect((await baton.client().tasks.get('shared')).state).toBe('completed');
  });

  it('keeps metadata exactly, nulls and nesting included', async () => {
    const store = new BatonTaskStore({ client: baton.client() });
    const metadata = { note: null, nested: { list: [1, 'two', null, { deep: true }] } };
    await store.save(task('exact', TaskState.TASK_STATE_WORKING, { metadata }), context);
    await store.save(task('exact', TaskState.TASK_STATE_WORKING, { metadata: { ...metadata, more: 1 } }), context);
    expect((await store.load('exact', context))?.metadata).toEqual({ ...metadata, more: 1 });
  });

  it('pages by tokens that hold any task id', async () => {
    const store = new BatonTaskStore({ client: baton.client() });
    const ids = ['tâche-1', 'タスク|2', 'task 3'];
    for (const [i, id] of ids.entries()) await store.save(task(id, TaskState.TASK_STATE_WORKING, { status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: `2026-01-0${i + 1}T00:00:00.000Z` } }), context);
    const seen: string[] = [];
    let pageToken = '';
    do {
      const page = await store.list({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken, statusTimestampAfter: undefined, pageSize: 1 }, context);
      seen.push(...page.tasks.map((t) => t.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(seen).toEqual([...ids].reverse());
  });

  it('refuses to load or save a task whose checkpoint fails Baton’s hash check, rather than answer it is not there', async () => {
    const store = new BatonTaskStore({ client: baton.client() });
    await store.save(task('damaged', TaskState.TASK_STATE_WORKING), context);
    const [doc] = (await baton.client().checkpoints.search({ taskId: 'damaged', labels: { 'a2a.kind': 'task' } })).items;
    await corruptCheckpoint(baton.t.store, doc!);
    await expect(new BatonTaskStore({ client: baton.client() }).load('damaged', context)).rejects.toThrow("failed Baton's hash check");
    await expect(new BatonTaskStore({ client: baton.client() }).save(task('damaged', TaskState.TASK_STATE_COMPLETED), context)).rejects.toThrow("failed Baton's hash check");
  });

  it('lists only its own tasks beside a store with a task prefix', async () => {
    const plain = new BatonTaskStore({ client: baton.client() });
    const prefixed = new BatonTaskStore({ client: baton.client(), taskPrefix: 'agent_tasks:' });
    await plain.save(task('mine', TaskState.TASK_STATE_WORKING), context);
    await prefixed.save(task('theirs', TaskState.TASK_STATE_WORKING), context);
    const request = { tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined };
    expect((await plain.list(request, context)).tasks.map((t) => t.id)).toEqual(['mine']);
    expect((await prefixed.list(request, context)).tasks.map((t) => t.id)).toEqual(['theirs']);
  });

  it('carries a task through a handoff of its checkpoint to the agent that acknowledges it', async () => {
    const clientA = baton.client();
    await clientA.leases.acquire('handed', { agentId: 'agent-a' });
    const storeA = new BatonTaskStore({ client: clientA, agentId: 'agent-a' });
    const asked = task('handed', TaskState.TASK_STATE_INPUT_REQUIRED, {
      history: [{ messageId: 'm1', contextId: 'ctx', taskId: 'handed', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'refund order 4711' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] }],
    });
    await storeA.save(asked, context);
    const [checkpoint] = (await clientA.checkpoints.search({ taskId: 'handed', labels: { 'a2a.kind': 'task' } })).items;
    const { handoff } = await clientA.handoffs.start(checkpoint!.id, { trigger: 'explicit', toAgentId: 'agent-b' });
    await expect(new BatonTaskStore({ client: baton.client() }).save(asked, context)).rejects.toThrow('being handed off');

    const clientB = baton.client();
    await clientB.handoffs.ack(handoff.id, { agentId: 'agent-b' });
    const storeB = new BatonTaskStore({ client: clientB, agentId: 'agent-b' });
    expect(await storeB.load('handed', context)).toEqual(asked);
    const done = { ...asked, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() } };
    await storeB.save(done, context);
    expect((await storeB.load('handed', context))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Listing shows the task once, from its newest checkpoint.
    const listed = await storeB.list({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined }, context);
    expect(listed.tasks.map((t) => [t.id, t.status?.state])).toEqual([['handed', TaskState.TASK_STATE_COMPLETED]]);
    // Agent A was fenced out by the handoff.
    await expect(storeA.save(asked, context)).rejects.toMatchObject({ code: 'lease_superseded' });
  });
});
