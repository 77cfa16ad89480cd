/**
 * A task's story as the timeline draws it, from the answers of the API:
 * lanes per agent, lineage, leases with how each ended, recoveries and
 * blocks, and a checkpoint the service could not verify placed from its
 * audit entry. (The browser test draws it from a real server.)
 */
import { describe, expect, it } from 'vitest';
import { buildStory } from '../../console/src/story.js';
import { layout } from '../../console/src/timeline-layout.js';
import type { AuditEntry, Checkpoint, Handoff, TaskInfo } from '../../src/client/types.js';

const at = (second: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();

function entry(seq: number, second: number, action: string, extra: Partial<AuditEntry> = {}): AuditEntry {
  return { seq, taskId: 't', at: at(second), actor: { subject: 's', role: 'writer' }, action, prevHash: '', hash: '', ...extra };
}

function checkpoint(id: string, second: number, agentId: string, extra: Partial<Checkpoint> = {}): Checkpoint {
  return { id, taskId: 't', agentId, iteration: 1, schemaVersion: '1.0', status: 'active', version: 1, createdAt: at(second), updatedAt: at(second), executionState: {}, contextSummary: {}, metrics: {}, recovery: {}, compliance: {}, labels: {}, extensions: {}, ...extra };
}

const task = { taskId: 't', state: 'working', lease: { leaseId: 'l3', agentId: 'c', epoch: 4, expiresAt: at(90) }, updatedAt: at(9) } as TaskInfo;
const handoff: Handoff = { id: 'h1', taskId: 't', checkpointId: 'k1', fromAgentId: 'a', trigger: 'context_limit', toAgentType: 'review', status: 'acknowledged', createdAt: at(3), acknowledgedAt: at(4), acknowledgedBy: { agentId: 'b' }, childCheckpointId: 'k2' };

const story = buildStory({
  task,
  checkpoints: [checkpoint('k4', 8, 'c', { parentId: 'k3' }), checkpoint('k2', 4, 'b', { parentId: 'k1' }), checkpoint('k1', 1, 'a', { status: 'finalized', finalStatus: 'handoff', version: 3 })],
  corrupted: ['k3'],
  audit: [
    entry(1, 0, 'lease.acquired', { actor: { subject: 's', role: 'writer', agentId: 'a' }, details: { leaseId: 'l1', epoch: 1, expiresAt: at(60) } }),
    entry(2, 1, 'checkpoint.created', { checkpointId: 'k1', version: 1, actor: { subject: 's', role: 'writer', agentId: 'a' } }),
    entry(3, 3, 'lease.released', { details: { leaseId: 'l1', epoch: 1 } }),
    entry(4, 3, 'handoff.initiated', { checkpointId: 'k1', version: 3 }),
    entry(5, 4, 'handoff.acknowledged', { details: { handoffId: 'h1' } }),
    entry(6, 4, 'lease.acquired', { actor: { subject: 's', role: 'writer', agentId: 'b' }, details: { leaseId: 'l2', epoch: 2, expiresAt: at(64) } }),
    entry(7, 5, 'checkpoint.created', { checkpointId: 'k3', version: 1, actor: { subject: 's', role: 'writer', agentId: 'b' } }),
    entry(8, 6, 'lease.revoked', { details: { leaseId: 'l2', epoch: 2 } }),
    entry(9, 6, 'recovery.initiated', { checkpointId: 'k2', details: { recoveryId: 'r1', reason: 'b crashed', failure: { kind: 'crash' } } }),
    entry(10, 7, 'recovery.completed', { actor: { subject: 's', role: 'writer', agentId: 'c' }, details: { recoveryId: 'r1' } }),
    entry(11, 7, 'lease.acquired', { actor: { subject: 's', role: 'writer', agentId: 'c' }, details: { leaseId: 'l3', epoch: 4, expiresAt: at(67) } }),
  ],
  handoffs: [handoff],
});

describe('buildStory', () => {
  it('gives each agent a lane in the order they appear, and places every checkpoint in time', () => {
    expect(story.lanes).toEqual(['a', 'b', 'c']);
    expect(story.points.map((p) => [p.id, p.agentId, p.broken])).toEqual([
      ['k1', 'a', false],
      ['k2', 'b', false],
      ['k3', 'b', true],
      ['k4', 'c', false],
    ]);
    expect(story.points[2]!.at).toBe(at(5));
  });

  it('draws lineage between checkpoints on the timeline, a broken parent included', () => {
    expect(story.edges).toEqual([
      { from: 'k1', to: 'k2' },
      { from: 'k3', to: 'k4' },
    ]);
  });

  it('follows each lease from its grant to how it ended, the live one to its expiry', () => {
    expect(story.leases.map((l) => [l.agentId, l.epoch, l.end, l.to])).toEqual([
      ['a', 1, 'released', at(3)],
      ['b', 2, 'revoked', at(6)],
      ['c', 4, 'live', at(90)],
    ]);
  });

  it('names the handoff with its trigger and both agents, and the recovery with its failure', () => {
    expect(story.handoffs).toEqual([expect.objectContaining({ trigger: 'context_limit', from: 'a', to: 'b', childCheckpointId: 'k2' })]);
    expect(story.recoveries.map((r) => [r.status, r.failureKind, r.agentId])).toEqual([
      ['initiated', 'crash', undefined],
      ['completed', undefined, 'c'],
    ]);
    expect(story.lines.find((l) => l.seq === 4)!.what).toBe('handed off (context_limit): a → b (version 3)');
  });

  it('lays the story out left to right in time, one lane under the other', () => {
    const l = layout(story, 'order', 1000);
    const x = (id: string) => l.points.get(id)!.x;
    expect(x('k1')).toBeLessThan(x('k2'));
    expect(x('k2')).toBeLessThan(x('k3'));
    expect(x('k3')).toBeLessThan(x('k4'));
    expect(l.points.get('k2')!.y).toBe(l.points.get('k3')!.y);
    expect(l.points.get('k1')!.y).toBeLessThan(l.points.get('k2')!.y);
    expect(l.width).toBeGreaterThanOrEqual(1000);
    const proportional = layout(story, 'time', 0);
    // The live lease runs to 90 s: far longer after k4 (8 s) than the 7 s from k1 to k4; by order they are one step each.
    const px = (id: string) => proportional.points.get(id)!.x;
    expect(proportional.x(at(90)) - px('k4')).toBeGreaterThan(5 * (px('k4') - px('k1')));
    expect(l.x(at(90)) - x('k4')).toBeLessThan(x('k4') - x('k1'));
  });
});
