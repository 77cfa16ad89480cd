/**
 * BatonThreadSaver behind the embed server, driven in process by the
 * official @langchain/langgraph-sdk client (as LangGraph's own embed test
 * drives its server), over a real Baton: the thread routes answer from
 * Baton alone, so a second server over the same Baton answers the same.
 */
import { Client } from '@langchain/langgraph-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLangGraphApi } from '../../src/langgraph-api/index.js';
import { releaseNoteWorkflow } from '../../examples/langgraph/graph.js';
import { listen, type Listening } from '../client/support/server.js';

let baton: Listening;
beforeEach(async () => {
  baton = await listen({ writerPurge: '1' });
});
afterEach(async () => {
  await baton.close();
});

function api(): Client {
  const { app } = createLangGraphApi({ client: baton.client(), graphs: { release_notes: releaseNoteWorkflow().compile() } });
  return new Client({ callerOptions: { fetch: app.request } });
}

describe('BatonThreadSaver', () => {
  it('creates, reads, updates and deletes threads, seen alike by two servers', async () => {
    const one = api();
    const two = api();
    const created = await one.threads.create({ metadata: { name: 'test_thread', note: null } });
    expect(created.metadata).toEqual({ name: 'test_thread', note: null });
    expect((await two.threads.get(created.thread_id)).metadata).toEqual({ name: 'test_thread', note: null });

    await two.threads.update(created.thread_id, { metadata: { modified: true } });
    const read = await one.threads.get(created.thread_id);
    expect(read.metadata).toEqual({ name: 'test_thread', note: null, modified: true });
    expect(Date.parse(read.updated_at)).toBeGreaterThanOrEqual(Date.parse(read.created_at));

    const other = await one.threads.create({ metadata: { name: 'another_thread' } });
    expect((await two.threads.search()).map((t) => t.thread_id)).toEqual([other.thread_id, created.thread_id]);
    expect((await two.threads.search({ metadata: { modified: true } })).map((t) => t.thread_id)).toEqual([created.thread_id]);
    expect((await two.threads.search({ offset: 1, limit: 1 })).map((t) => t.thread_id)).toEqual([created.thread_id]);
    expect((await two.threads.search({ sortBy: 'created_at', sortOrder: 'asc' })).map((t) => t.thread_id)).toEqual([created.thread_id, other.thread_id]);

    await one.threads.delete(created.thread_id);
    expect((await two.threads.search()).map((t) => t.thread_id)).toEqual([other.thread_id]);
  });

  it('keeps a thread record beside the thread’s checkpoints, which BatonSaver passes over', async () => {
    const client = api();
    const thread = await client.threads.create({ metadata: { team: 'docs' } });
    for await (const chunk of client.runs.stream(thread.thread_id, 'release_notes', { input: { topic: 'threads in Baton' }, streamMode: 'values' })) {
      if (chunk.event === 'error') throw new Error(JSON.stringify(chunk.data));
    }
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['review']);
    const task = await baton.client().checkpoints.history(`langgraph:${thread.thread_id}`, { limit: 100 });
    expect(task.items.filter((doc) => doc.labels['lg.kind'] === 'thread')).toHaveLength(1);
    expect(task.items.length).toBeGreaterThan(1);
  });
});
