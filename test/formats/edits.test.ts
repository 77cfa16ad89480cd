/**
 * A checkpoint imported from a format and changed afterwards through the JSON
 * API exports its current fields: what was kept as written comes back only
 * while it still describes them.
 */
import { describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../src/domain/checkpoint.js';
import { FORMATS } from '../../src/formats/index.js';
import { canonicalXml, fixture, materialize } from './support.js';

function imported(format: 'builder-state' | 'pipeline' | 'workflow-xml' | 'markdown', text: string): Checkpoint {
  return materialize(FORMATS[format].parse(text, format === 'pipeline' ? {} : { taskId: 'task-1' }));
}

describe('builder-state after edits', () => {
  it('a new focus drops the old step’s partial work; a new agent becomes createdBy; new items appear', () => {
    const checkpoint = imported('builder-state', fixture('seed-000-builder-state.json'));
    checkpoint.executionState.currentFocus = 'Add CSS custom properties for dark theme';
    checkpoint.executionState.pendingItems = ['Add CSS custom properties for dark theme'];
    checkpoint.agentId = 'css-dev';
    const doc = JSON.parse(FORMATS['builder-state'].render(checkpoint));
    expect(doc.activePrd.checkpoint.currentStep).toEqual({ description: 'Add CSS custom properties for dark theme' });
    expect(doc.activePrd.checkpoint.pendingSteps).toEqual(['Add CSS custom properties for dark theme']);
    expect(doc.activePrd.checkpoint.metadata.createdBy).toBe('css-dev');
    expect(doc.activePrd.checkpoint.metadata.reason).toBe('periodic');
    expect(doc.sessionId).toBe('builder-abc123');
  });

  it('phases outside the schema’s four keep Baton’s name, so they read back', () => {
    const checkpoint = imported('builder-state', '{"phase": "verification"}');
    expect(checkpoint.executionState.phase).toBe('testing');
    checkpoint.executionState.phase = 'handoff';
    const text = FORMATS['builder-state'].render(checkpoint);
    expect(JSON.parse(text).phase).toBe('handoff');
    expect(FORMATS['builder-state'].parse(text, { taskId: 't' }).executionState?.phase).toBe('handoff');
  });
});

describe('pipeline after edits', () => {
  it('the stage follows the phase, a handoff keeps the stage it left, and labels are the scores', () => {
    const checkpoint = imported('pipeline', fixture('seed-002-pipeline-stage3.json'));
    checkpoint.executionState.phase = 'handoff';
    expect(JSON.parse(FORMATS.pipeline.render(checkpoint)).stage).toBe(3);
    checkpoint.executionState.phase = 'implementing';
    checkpoint.executionState.pendingItems = ['PROJ-106'];
    checkpoint.labels['pipeline.verdict'] = 'FAIL';
    const doc = JSON.parse(FORMATS.pipeline.render(checkpoint));
    expect(doc).toMatchObject({ stage: 2, tasksRemaining: ['PROJ-106'], verdict: 'FAIL', lastAction: 'Quality gate completed, verdict: PASS' });
  });

  it('fields the document lacked stay absent unless set since', () => {
    const checkpoint = imported('pipeline', '{"storyId": "S-1", "stage": 2, "agentId": "w"}');
    expect(JSON.parse(FORMATS.pipeline.render(checkpoint))).toEqual({ storyId: 'S-1', stage: 2, agentId: 'w' });
    checkpoint.executionState.completedItems = ['T-1'];
    expect(JSON.parse(FORMATS.pipeline.render(checkpoint)).tasksCompleted).toEqual(['T-1']);
  });
});

describe('workflow-xml after edits', () => {
  it('decisions fill their places and follow the last; a removed focus takes its element; a named phase replaces a placeholder', () => {
    const checkpoint = imported('workflow-xml', fixture('seed-003-workflow-corrected.xml'));
    checkpoint.contextSummary.keyDecisions = [{ decision: 'Fastify', id: 'framework' }, 'LMDB', 'FoundationDB'];
    delete checkpoint.executionState.currentFocus;
    checkpoint.executionState.phase = 'testing';
    const xml = FORMATS['workflow-xml'].render(checkpoint);
    expect(xml).toContain('<decision id="framework">Fastify</decision>\n      <decision>LMDB</decision>\n      <decision>FoundationDB</decision>\n    </critical_decisions>');
    expect(xml).not.toContain('next_step');
    expect(xml).toContain('<next_stage>verification</next_stage>');
    expect(xml).toContain('<mission>original_user_request_and_objective</mission>');
  });

  it('a field set on a document without its element gets one, where the format puts it', () => {
    const checkpoint = imported('workflow-xml', '<workflow_checkpoint><checkpoint_id>w-1</checkpoint_id></workflow_checkpoint>');
    checkpoint.executionState.currentFocus = 'Run the suite';
    expect(canonicalXml(FORMATS['workflow-xml'].render(checkpoint))).toBe(
      canonicalXml('<workflow_checkpoint><checkpoint_id>w-1</checkpoint_id><resume_instructions><next_step>Run the suite</next_step></resume_instructions></workflow_checkpoint>'),
    );
  });
});

describe('markdown after edits', () => {
  const doc = `---\ncheckpoint: chk-7\ncreated: 2026-01-02T03:04:05Z\n---\n\n## Problem\nSessions expire.\n\n## Essential Information\n\n### Decisions\n[none yet]\n\n### Current State\nNothing built.\n\n---\n\n## Delta: 2026-01-03T00:00:00Z\n\n### What Changed\n\nStarted.\n`;

  it('a prose section becomes a list once it has more than its one entry; new fields get sections in the format’s order, before the deltas', () => {
    const checkpoint = imported('markdown', doc);
    expect(checkpoint.contextSummary.keyDecisions).toEqual(['[none yet]']);
    checkpoint.contextSummary.keyDecisions = ['Refresh tokens', 'Rotate them'];
    checkpoint.executionState.pendingItems = ['Write the E2E test'];
    const text = FORMATS.markdown.render(checkpoint);
    expect(text).toBe(
      `---\ncheckpoint: chk-7\ncreated: 2026-01-02T03:04:05Z\n---\n\n## Problem\nSessions expire.\n\n## Essential Information\n\n### Decisions\n- Refresh tokens\n- Rotate them\n\n### Current State\nNothing built.\n\n### Next Actions\n\n- Write the E2E test\n\n---\n\n## Delta: 2026-01-03T00:00:00Z\n\n### What Changed\n\nStarted.\n`,
    );
  });

  it('a cleared field takes its section with it', () => {
    const checkpoint = imported('markdown', doc);
    checkpoint.executionState.currentFocus = null;
    expect(FORMATS.markdown.render(checkpoint)).not.toContain('### Current State');
  });
});
