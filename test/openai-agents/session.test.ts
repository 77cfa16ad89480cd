/**
 * BatonSession beyond the SDK's own session tests (test/openai-agents/ported):
 * what Baton adds, seen as a user would check it over a real server. Two
 * BatonSessions with clients of their own stand for two processes.
 */
import { isSessionHistoryRewriteAwareSession, isSessionHistoryTransactionAwareSession, type AgentInputItem } from '@openai/agents-core';
import { describe, expect, it } from 'vitest';
import { BatonError } from '../../src/client/index.js';
import { BatonSession, CorruptedError } from '../../src/openai-agents/index.js';
import { corruptCheckpoint } from '../support/corrupt.js';
import { batonServerPerTest, server } from './support.js';

batonServerPerTest();

const say = (text: string): AgentInputItem => ({ role: 'user', content: text });
const texts = (items: AgentInputItem[]): string[] => items.map((item) => (item as { content: string }).content);

function session(sessionId: string, options: { segmentBytes?: number; agentId?: string } = {}): BatonSession {
  return new BatonSession({ client: server().client(), sessionId, ...options });
}

describe('BatonSession', () => {
  it('is a transaction-aware and rewrite-aware session for the SDK runner', () => {
    const s = session('guards');
    expect(isSessionHistoryTransactionAwareSession(s)).toBe(true);
    expect(isSessionHistoryRewriteAwareSession(s)).toBe(true);
  });

  it('keeps both writers’ items when two processes add to one session at once', async () => {
    const a = session('shared');
    const b = session('shared');
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => a.addItems([say(`a${i}`)])),
      ...Array.from({ length: 10 }, (_, i) => b.addItems([say(`b${i}`)])),
    ]);
    const seenByA = texts(await a.getItems());
    expect(seenByA).toHaveLength(20);
    expect(seenByA.filter((t) => t.startsWith('a'))).toEqual(Array.from({ length: 10 }, (_, i) => `a${i}`));
    expect(seenByA.filter((t) => t.startsWith('b'))).toEqual(Array.from({ length: 10 }, (_, i) => `b${i}`));
    expect(texts(await b.getItems())).toEqual(seenByA);
    // Two writers starting the session together made one head between them.
    const heads = await server().client().checkpoints.search({ taskId: 'shared', labels: { 'oa.kind': 'session' } });
    expect(heads.items).toHaveLength(1);
  });

  it('pops each item once when two processes pop together', async () => {
    const a = session('popping');
    await a.addItems(['1', '2', '3', '4'].map(say));
    const b = session('popping');
    const popped = await Promise.all([a.popItem(), b.popItem(), a.popItem(), b.popItem(), a.popItem()]);
    expect(texts(popped.filter((item): item is AgentInputItem => item !== undefined)).sort()).toEqual(['1', '2', '3', '4']);
    expect(popped.filter((item) => item === undefined)).toHaveLength(1);
    expect(await b.getItems()).toEqual([]);
  });

  it('carries a long history over sealed segments, and pops and replaces across their boundaries', async () => {
    const s = session('long', { segmentBytes: 300 });
    const written = Array.from({ length: 40 }, (_, i) => `item ${i} ${'x'.repeat(20)}`);
    for (const text of written) await s.addItems([say(text)]);
    expect(texts(await s.getItems())).toEqual(written);
    expect(texts(await s.getItems(3))).toEqual(written.slice(-3));

    const segments = (await server().client().checkpoints.search({ taskId: 'long', labels: { 'oa.kind': 'session' }, limit: 100 })).items;
    expect(segments.length).toBeGreaterThan(5);
    // Each segment names the one it follows, so Baton's lineage walks the whole history.
    const lineage = await server().client().checkpoints.lineage(segments[0]!.id, { limit: 1000 });
    expect(lineage.ancestors).toHaveLength(segments.length - 1);

    // A fresh process reads the same history; popping reaches into sealed segments.
    const other = session('long', { segmentBytes: 300 });
    for (let i = 39; i >= 30; i--) expect(texts([(await other.popItem())!])).toEqual([written[i]]);
    expect(texts(await s.getItems())).toEqual(written.slice(0, 30));

    await other.applyHistoryTransaction({
      operationId: 'replace-across',
      transaction: { type: 'replace_suffix', expectedSuffix: written.slice(20, 30).map(say), replacement: [say('summary of 20-29')] },
    });
    expect(texts(await s.getItems())).toEqual([...written.slice(0, 20), 'summary of 20-29']);
    await s.addItems([say('after')]);
    expect(texts(await other.getItems(2))).toEqual(['summary of 20-29', 'after']);
  });

  it('applies a transaction once across processes, and refuses the same operation id with other content', async () => {
    const a = session('transactions');
    await a.addItems([say('start')]);
    const transaction = { operationId: 'op-1', transaction: { type: 'append_items' as const, items: [say('committed')] } };
    await a.applyHistoryTransaction(transaction);
    // A process that resumes the run retries the same operation: nothing is applied twice.
    const b = session('transactions');
    await b.applyHistoryTransaction(transaction);
    expect(texts(await b.getItems())).toEqual(['start', 'committed']);
    await expect(b.applyHistoryTransaction({ operationId: 'op-1', transaction: { type: 'append_items', items: [say('other')] } })).rejects.toThrow('already applied with a different transaction');
    expect(texts(await a.getItems())).toEqual(['start', 'committed']);
  });

  it('records every change on the task’s audit chain, which verifies, and announces it as an event', async () => {
    const s = session('audited');
    await s.addItems([say('one'), say('two')]);
    await s.popItem();
    await s.clearSession();
    const client = server().client({ who: 'auditor' });
    const audit = await client.tasks.audit('audited', { limit: 100 });
    expect(audit.items.map((entry) => entry.action)).toEqual(['checkpoint.created', 'checkpoint.updated', 'checkpoint.updated', 'checkpoint.updated']);
    expect((await client.tasks.verifyAudit('audited')).ok).toBe(true);
    const events = await server().client().events.page({ types: ['CHECKPOINT_UPDATED'], limit: 100 });
    expect(events.items.filter((event) => event.data && (event.data as { taskId?: string }).taskId === 'audited')).toHaveLength(3);
  });

  it('refuses to answer from an older segment when the newest fails Baton’s hash check', async () => {
    const s = session('damaged', { segmentBytes: 200 });
    for (const text of ['one', 'two', 'three', 'four', 'five', 'six']) await s.addItems([say(`${text} ${'x'.repeat(40)}`)]);
    const [head] = (await server().client().checkpoints.search({ taskId: 'damaged', labels: { 'oa.kind': 'session' }, limit: 1 })).items;
    await corruptCheckpoint(server().t.store, head!);
    await expect(session('damaged').getItems()).rejects.toBeInstanceOf(CorruptedError);
    await expect(session('damaged').addItems([say('more')])).rejects.toThrow("failed Baton's hash check");
    const events = await server().client().events.page({ types: ['CHECKPOINT_CORRUPTED'] });
    expect(events.items.map((event) => event.subject)).toContain(head!.id);
  });

  it('waits for a handoff of its task, and carries on with the agent that acknowledges it', async () => {
    const a = session('handed', { agentId: 'agent-a' });
    const clientA = a.client;
    // Agent A holds the task's lease, so its client sends the lease's epoch with every write.
    await clientA.leases.acquire('handed', { agentId: 'agent-a' });
    await a.addItems([say('from a')]);
    const head = (await clientA.checkpoints.search({ taskId: 'handed', labels: { 'oa.kind': 'session' }, limit: 1 })).items[0]!;
    const { handoff } = await clientA.handoffs.start(head.id, { trigger: 'explicit', toAgentId: 'agent-b' });
    await expect(a.addItems([say('too late')])).rejects.toThrow('being handed off');
    expect(texts(await a.getItems())).toEqual(['from a']);

    const clientB = server().client();
    await clientB.handoffs.ack(handoff.id, { agentId: 'agent-b' });
    const b = new BatonSession({ client: clientB, sessionId: 'handed', agentId: 'agent-b' });
    expect(texts(await b.getItems())).toEqual(['from a']);
    await b.addItems([say('from b')]);
    expect(texts(await b.getItems())).toEqual(['from a', 'from b']);
    // The agent that handed off is fenced out: its writes no longer land.
    const refused = await a.addItems([say('stale')]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BatonError);
    expect((refused as BatonError).code).toBe('lease_superseded');
    expect(texts(await b.getItems())).toEqual(['from a', 'from b']);
  });
});
