/**
 * The registry the HTTP layer wires import and export onto: names, media
 * types, which formats import, and that a checkpoint created through the JSON
 * API (no extensions) exports to every format and imports back.
 */
import { describe, expect, it } from 'vitest';
import type { CheckpointInput } from '../../src/domain/checkpoint.js';
import { EXPORT_FORMAT_NAMES, FORMATS, FormatError, IMPORT_FORMAT_NAMES, isFormatName, isImportFormatName, UNKNOWN_AGENT } from '../../src/formats/index.js';
import { assertValidInput, materialize } from './support.js';

/** A checkpoint as a client creates it through POST /v1/checkpoints: every generic field, no extensions. */
const created: CheckpointInput = {
  taskId: 'task-42',
  agentId: 'agent-7',
  agentType: 'implementation',
  executionState: {
    phase: 'testing',
    completedItems: ['Scaffold the service', { id: 'T-2', description: 'Add the store', files: { created: ['src/store.ts'], modified: [{ path: 'src/app.ts', sha256: 'a'.repeat(64) }] }, at: '2026-03-01T09:00:00Z' }],
    pendingItems: ['Write the load test', { id: 'T-4', description: 'Tune the cache' }],
    blockedItems: [{ description: 'Deploy to staging', blocker: 'cluster quota' }],
    currentFocus: 'Flaky LMDB test',
  },
  contextSummary: {
    keyDecisions: ['Use LMDB by default', { decision: 'Tuple-encode keys', rationale: 'ordered ranges', at: '2026-03-01T08:00:00Z', by: 'agent-7' }],
    assumptions: ['Node 20'],
    constraints: ['No global counters'],
  },
  metrics: { tokensConsumed: 1200, filesModified: ['src/app.ts'], testsStatus: { passed: 10, failed: 1 } },
  recovery: { continuationPrompt: 'Fix the flaky test, then run the load test.', rollbackInstructions: 'git revert HEAD' },
  labels: { team: 'storage' },
};

describe('FORMATS', () => {
  it('has the four importable formats and the export-only resume block, with their media types', () => {
    expect(Object.keys(FORMATS).sort()).toEqual([...EXPORT_FORMAT_NAMES].sort());
    expect(IMPORT_FORMAT_NAMES).toEqual(['builder-state', 'pipeline', 'workflow-xml', 'markdown']);
    expect(Object.fromEntries(Object.values(FORMATS).map((format) => [format.name, format.mediaType]))).toEqual({
      'builder-state': 'application/json',
      pipeline: 'application/json',
      'workflow-xml': 'application/xml',
      markdown: 'text/markdown',
      'resume-block': 'text/plain',
    });
    for (const name of IMPORT_FORMAT_NAMES) expect(typeof FORMATS[name].parse).toBe('function');
    expect(FORMATS['resume-block'].parse).toBeUndefined();
  });

  it('tells format names from anything else', () => {
    expect(isFormatName('resume-block')).toBe(true);
    expect(isImportFormatName('resume-block')).toBe(false);
    expect(isImportFormatName('markdown')).toBe(true);
    for (const name of ['json', 'toString', '__proto__', 'constructor', '']) expect(isFormatName(name)).toBe(false);
  });

  for (const name of EXPORT_FORMAT_NAMES) {
    it(`${name}: a checkpoint created through the JSON API exports${name === 'resume-block' ? '' : ' and imports back'}`, () => {
      const checkpoint = materialize(created);
      const text = FORMATS[name].render(checkpoint);
      expect(text.length).toBeGreaterThan(0);
      expect(text.endsWith('\n')).toBe(true);
      if (name === 'resume-block') {
        expect(text).toBe(
          'CHECKPOINT RESUME — DO NOT re-execute completed work.\nTasks already completed: Scaffold the service, T-2\nTasks remaining: Write the load test, T-4\nLast action: Add the store\nContinue from remaining tasks only.\n',
        );
        return;
      }
      const back = FORMATS[name].parse(text, { taskId: created.taskId });
      assertValidInput(back);
      expect(back.taskId).toBe(created.taskId);
      expect(back.executionState?.currentFocus ?? back.executionState?.pendingItems).toBeDefined();
    });
  }

  it('a document without an agent is imported as the importer’s agent, else as unknown', () => {
    expect(FORMATS.markdown.parse('## Problem\nx\n', { taskId: 't', agentId: 'agent-9' }).agentId).toBe('agent-9');
    expect(FORMATS['workflow-xml'].parse('<workflow_checkpoint/>', { taskId: 't' }).agentId).toBe(UNKNOWN_AGENT);
  });

  it('export never fails on extensions a patch has broken: it falls back to the checkpoint’s fields', () => {
    const broken = [null, 7, 'text', [], { fields: 3 }, { nodes: [{ element: 'a b', children: [] }] }, { sections: [{ heading: 1 }] }, { file: { document: {}, at: ['missing', 'x'] }, fields: {} }];
    for (const value of broken) {
      for (const name of EXPORT_FORMAT_NAMES) {
        const checkpoint = materialize({ ...created, extensions: { [name]: value, 'builder-state': value, pipeline: value, 'workflow-xml': value, markdown: value } });
        expect(() => FORMATS[name].render(checkpoint)).not.toThrow();
      }
    }
  });
});

describe('FormatError', () => {
  it('carries a static message and turns into one { field, message } entry', () => {
    const located = new FormatError({ format: 'pipeline', line: 3, column: 7, expected: 'a string' });
    expect(located.message).toBe(FormatError.MESSAGE);
    expect(located.toFieldError()).toEqual({ field: 'line 3, column 7', message: 'expected a string' });
    expect(new FormatError({ format: 'pipeline', field: 'stage', expected: 'an integer from 0 to 3' }).toFieldError()).toEqual({ field: 'stage', message: 'expected an integer from 0 to 3' });
    expect(new FormatError({ format: 'markdown', expected: 'x' }).toFieldError().field).toBe('document');
  });
});
