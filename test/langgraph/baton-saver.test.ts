/**
 * BatonSaver beyond LangGraph's suite: what Baton stores for it (binary
 * values as base64, labels), writes that arrive before their checkpoint,
 * filters Baton cannot index, and a purge that retention refuses. Real app,
 * real socket, LMDB in a temporary directory.
 */
import { emptyCheckpoint, type Checkpoint } from '@langchain/langgraph-checkpoint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatonError } from '../../src/client/index.js';
import { BatonSaver } from '../../src/langgraph/index.js';
import { listen, type Listening } from '../client/support/server.js';

let server: Listening;
beforeAll(async () => {
  server = await listen({ writerPurge: '1' });
});
afterAll(async () => {
  await server.close();
});

const saver = (name: string) => new BatonSaver({ client: server.client(), agentId: `saver-${name}`, taskPrefix: `saver-${name}:` });
const meta = { source: 'loop' as const, step: 0, parents: {} };

function checkpoint(id: string, values: Record<string, unknown>): Checkpoint {
  return { ...emptyCheckpoint(), id, channel_values: values, channel_versions: Object.fromEntries(Object.keys(values).map((k) => [k, 1])) };
}

describe('BatonSaver', () => {
  it('keeps bytes as they were, stored as base64 in the checkpoint, with LangGraph ids in labels', async () => {
    const s = saver('bytes');
    const bytes = new Uint8Array([0, 255, 1, 128, 10, 13]);
    const config = await s.put({ configurable: { thread_id: 't1' } }, checkpoint('1f000000-0000-6000-8000-000000000001', { raw: bytes }), meta, { raw: 1 });
    const tuple = await s.getTuple(config);
    expect(tuple?.checkpoint.channel_values.raw).toEqual(bytes);
    const stored = (await server.client().checkpoints.search({ taskId: 'saver-bytes:t1' })).items[0]!;
    expect(stored.labels).toMatchObject({ 'lg.id': '1f000000-0000-6000-8000-000000000001', 'lg.ns': '', 'lg.meta.source': 'loop', 'lg.meta.step': 0 });
    const blob = (stored.extensions.langgraph as { blobs: Record<string, [string, string]> }).blobs.raw!;
    expect(blob[1]).toMatch(/^[A-Za-z0-9+/]+=*$/);
  });

  it('puts writes sent before their checkpoint into the checkpoint’s own create', async () => {
    const s = saver('early');
    const id = '1f000000-0000-6000-8000-000000000002';
    const config = { configurable: { thread_id: 't2', checkpoint_ns: '', checkpoint_id: id } };
    const writing = s.putWrites(config, [['animals', 'dog']], 'task-a');
    // LangGraph sends the put of the step's checkpoint after the writes; let the writes find nothing first.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await s.put({ configurable: { thread_id: 't2', checkpoint_ns: '' } }, checkpoint(id, {}), meta, {});
    await writing;
    expect((await s.getTuple(config))?.pendingWrites).toEqual([['task-a', 'animals', 'dog']]);
    const audit = await server.client().tasks.audit('saver-early:t2');
    expect(audit.items.map((e) => e.action)).toEqual(['checkpoint.created']);
  });

  it('applies a filter Baton cannot index (an object) on what the search answers', async () => {
    const s = saver('filter');
    await s.put({ configurable: { thread_id: 't3' } }, checkpoint('1f000000-0000-6000-8000-000000000003', {}), { ...meta, parents: { a: 'x' } }, {});
    const shared = { ...meta, parents: {} };
    await s.put({ configurable: { thread_id: 't3' } }, checkpoint('1f000000-0000-6000-8000-000000000004', {}), shared, {});
    const ids: string[] = [];
    for await (const tuple of s.list({ configurable: { thread_id: 't3' } }, { filter: { source: 'loop', parents: shared.parents } })) ids.push(tuple.checkpoint.id);
    // `===` on an object never matches another object, as in LangGraph's own savers.
    expect(ids).toEqual([]);
    for await (const tuple of s.list({ configurable: { thread_id: 't3' } }, { filter: { step: 0 } })) ids.push(tuple.checkpoint.id);
    expect(ids).toEqual(['1f000000-0000-6000-8000-000000000004', '1f000000-0000-6000-8000-000000000003']);
  });

  it('refuses deleteThread under a legal hold with retention_active, and deletes nothing', async () => {
    const s = saver('hold');
    const config = await s.put({ configurable: { thread_id: 't4' } }, checkpoint('1f000000-0000-6000-8000-000000000005', {}), meta, {});
    await server.client().checkpoints.create({ taskId: 'saver-hold:t4', agentId: 'compliance', compliance: { legalHold: true } });
    const refused = await s.deleteThread('t4').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BatonError);
    expect((refused as BatonError).code).toBe('retention_active');
    expect(await s.getTuple(config)).toBeDefined();
    await s.deleteThread('never-written');
  });
});
