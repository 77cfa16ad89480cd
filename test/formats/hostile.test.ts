/**
 * Broken and hostile documents at parse level: each is refused with a
 * FormatError (never another exception), quickly, naming where the fault is.
 */
import { describe, expect, it } from 'vitest';
import { FORMATS, FormatError, type ImportFormatName } from '../../src/formats/index.js';
import { fixture } from './support.js';

/** Parses and expects a FormatError within `ms` milliseconds; returns it for further checks. */
function refused(format: ImportFormatName, text: string, options: { taskId?: string } = { taskId: 'task-1' }, ms = 1500): FormatError {
  const started = performance.now();
  let caught: unknown;
  try {
    FORMATS[format].parse(text, options);
  } catch (error) {
    caught = error;
  }
  expect(performance.now() - started).toBeLessThan(ms);
  expect(caught).toBeInstanceOf(FormatError);
  const error = caught as FormatError;
  expect(error.format).toBe(format);
  expect(error.message).toBe(FormatError.MESSAGE);
  const entry = error.toFieldError();
  expect(entry.field.length).toBeGreaterThan(0);
  expect(entry.message).toMatch(/^expected /);
  return error;
}

const TEN_MB = 10 * 1024 * 1024;

describe('JSON formats refuse broken documents', () => {
  const seed = fixture('seed-000-builder-state.json');
  const pipeline = fixture('seed-002-pipeline-stage3.json');

  it('truncated: the line and column where the document ends', () => {
    const error = refused('builder-state', seed.slice(0, 300));
    expect(error.line).toBeGreaterThan(1);
    expect(error.column).toBeGreaterThan(0);
    refused('pipeline', pipeline.slice(0, pipeline.length - 3), {});
  });

  it('mis-nested brackets', () => {
    const error = refused('pipeline', '{\n  "storyId": "S-1",\n  "tasksCompleted": ["a", "b"}\n}', {});
    expect([error.line, error.column]).toEqual([3, 30]);
  });

  it('wrongly typed fields, named by their JSON path', () => {
    expect(refused('builder-state', '[]').field).toBe('document');
    expect(refused('builder-state', 'null').field).toBe('document');
    expect(refused('builder-state', '{"completedSteps": "done"}').field).toBe('completedSteps');
    expect(refused('builder-state', '{"completedSteps": [{"step": 3}]}').field).toBe('completedSteps[0].step');
    expect(refused('builder-state', '{"completedSteps": [{"step": "a", "timestamp": "yesterday"}]}').field).toBe('completedSteps[0].timestamp');
    expect(refused('builder-state', '{"phase": "coding"}').expected).toContain('implementation');
    expect(refused('builder-state', '{"metadata": {"createdBy": 7}}').field).toBe('metadata.createdBy');
    expect(refused('builder-state', '{"sessionId": "s", "activePrd": {"checkpoint": null}}').field).toBe('activePrd.checkpoint');
    expect(refused('builder-state', '{"activePrd": {"checkpoint": {"pendingSteps": [1]}}}').field).toBe('activePrd.checkpoint.pendingSteps[0]');
    expect(refused('builder-state', '{"completedSteps": [{"step": "a", "filesCreated": [""]}]}').field).toBe('completedSteps.0.files.created.0');
    expect(refused('builder-state', `{"pendingSteps": ["${'x'.repeat(20_001)}"]}`).field).toBe('pendingSteps.0');
    expect(refused('pipeline', '{"storyId": "S", "stage": "3"}', {}).field).toBe('stage');
    expect(refused('pipeline', '{"storyId": "S", "stage": 7}', {}).field).toBe('stage');
    expect(refused('pipeline', '{"storyId": "S", "stage": 1.5}', {}).field).toBe('stage');
    expect(refused('pipeline', '{"storyId": "S", "qualityScore": "92"}', {}).field).toBe('qualityScore');
    expect(refused('pipeline', '{"storyId": 42}', {}).field).toBe('storyId');
    expect(refused('pipeline', '{"storyId": "bad\\u0001id"}', {}).field).toBe('storyId');
    expect(refused('pipeline', `{"storyId": "S", "verdict": "${'x'.repeat(2000)}"}`, {}).field).toBe('verdict');
  });

  it('a missing or contradicted task names taskId', () => {
    expect(refused('builder-state', '{"phase": "planning"}', {}).field).toBe('taskId');
    expect(refused('pipeline', '{"stage": 0}', {}).field).toBe('taskId');
    expect(refused('pipeline', '{"storyId": "S-1"}', { taskId: 'S-2' }).field).toBe('taskId');
  });

  it('prototype keys, absurd nesting and oversized documents', () => {
    refused('builder-state', '{"__proto__": {"polluted": true}}');
    refused('pipeline', '{"storyId": "S", "x": {"constructor": {"prototype": {"polluted": true}}}}', {});
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    refused('builder-state', `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    refused('pipeline', `{"storyId": "S", "x": ${'['.repeat(200)}${']'.repeat(200)}}`, {});
    refused('pipeline', `{"storyId": "S", "lastAction": "${'x'.repeat(TEN_MB)}"}`, {});
  });
});

describe('workflow-xml refuses broken and hostile documents', () => {
  const billionLaughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<workflow_checkpoint><checkpoint_id>&lol9;</checkpoint_id></workflow_checkpoint>`;

  it('an entity expansion bomb is refused at its DOCTYPE, before anything expands', () => {
    const error = refused('workflow-xml', billionLaughs, { taskId: 't' }, 200);
    expect([error.line, error.column]).toEqual([2, 1]);
    expect(error.expected).toContain('DOCTYPE');
  });

  it('external entities are refused and never read', () => {
    for (const doc of [
      '<?xml version="1.0"?>\n<!DOCTYPE w [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<workflow_checkpoint><mission>&xxe;</mission></workflow_checkpoint>',
      '<!-- a comment first --><!DOCTYPE w SYSTEM "http://127.0.0.1:1/evil.dtd"><workflow_checkpoint/>',
      '<!doctype w [<!ENTITY % p SYSTEM "file:///etc/hostname"> %p;]><workflow_checkpoint/>',
    ]) {
      const error = refused('workflow-xml', doc);
      expect(JSON.stringify(error)).not.toContain('root:');
    }
  });

  it('entities that were never declared are refused, wherever they stand', () => {
    expect(refused('workflow-xml', '<workflow_checkpoint><mission>&xxe;</mission></workflow_checkpoint>').field).toBe('/workflow_checkpoint/mission');
    expect(refused('workflow-xml', '<workflow_checkpoint><note kind="&copy;"/></workflow_checkpoint>').field).toBe('/workflow_checkpoint/note@kind');
  });

  it('truncated and mis-nested documents: line and column', () => {
    const seed = fixture('seed-003-error.xml');
    const truncated = refused('workflow-xml', seed.slice(0, seed.indexOf('</recovery_strategy>')));
    expect(truncated.line).toBeGreaterThan(0);
    const misnested = refused('workflow-xml', '<error_checkpoint>\n  <resume_plan>\n    <recovery_steps>x</resume_plan>\n  </recovery_steps>\n</error_checkpoint>');
    expect([misnested.line, misnested.column]).toEqual([3, 22]);
    refused('workflow-xml', '');
    refused('workflow-xml', 'not xml at all');
    refused('workflow-xml', '<workflow_checkpoint><a b="1" b="2"/></workflow_checkpoint>');
  });

  it('wrong roots, ambiguous or mixed-content elements and reserved attributes, named by element path', () => {
    expect(refused('workflow-xml', '<checkpoint/>').expected).toContain('workflow_checkpoint');
    refused('workflow-xml', '<workflow_checkpoint/><error_checkpoint/>');
    expect(refused('workflow-xml', '<workflow_checkpoint><resume_instructions><next_step>a</next_step><next_step>b</next_step></resume_instructions></workflow_checkpoint>').field).toBe(
      '/workflow_checkpoint/resume_instructions/next_step',
    );
    expect(refused('workflow-xml', '<workflow_checkpoint><resume_instructions><next_step>a<b/></next_step></resume_instructions></workflow_checkpoint>').field).toBe(
      '/workflow_checkpoint/resume_instructions/next_step',
    );
    expect(refused('workflow-xml', '<workflow_checkpoint><context_snapshot><critical_decisions><decision decision="x">y</decision></critical_decisions></context_snapshot></workflow_checkpoint>').field).toBe(
      '/workflow_checkpoint/context_snapshot/critical_decisions/decision[1]@decision',
    );
    expect(refused('workflow-xml', '<workflow_checkpoint><context_snapshot><implementation_artifacts><artifact/></implementation_artifacts></context_snapshot></workflow_checkpoint>').field).toContain(
      'implementation_artifacts/artifact',
    );
    refused('workflow-xml', '<workflow_checkpoint><__proto__>x</__proto__></workflow_checkpoint>');
  });

  it('absurd nesting and oversized documents', () => {
    refused('workflow-xml', `<workflow_checkpoint>${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</workflow_checkpoint>`);
    refused('workflow-xml', `<workflow_checkpoint><mission>${'x'.repeat(TEN_MB)}</mission></workflow_checkpoint>`);
  });
});

describe('markdown refuses broken and hostile documents', () => {
  it('front matter that never closes: line 1', () => {
    const error = refused('markdown', '---\ncheckpoint: chk-1\ncreated: 2026-01-01T00:00:00Z\n\n## Problem\nx\n');
    expect([error.line, error.column, error.field]).toEqual([1, 1, 'front matter']);
  });

  it('10 MB of front matter is refused without being parsed', () => {
    refused('markdown', `---\n${'key: value\n'.repeat(TEN_MB / 11)}---\n## Problem\nx\n`, { taskId: 't' }, 500);
    const error = refused('markdown', `---\n${'k: v\n'.repeat(40_000)}---\n`, { taskId: 't' }, 500);
    expect(error.expected).toContain('front matter of at most');
  });

  it('YAML faults with the document line, alias bombs and wrongly typed header fields', () => {
    const syntax = refused('markdown', '---\ncheckpoint: chk-1\ncreated: [2026\nanchor: x\n---\n');
    expect(syntax.line).toBeGreaterThanOrEqual(3);
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const name of ['b', 'c', 'd', 'e', 'f', 'g']) bomb.push(`${name}: &${name} [${Array(9).fill(`*${String.fromCharCode(name.charCodeAt(0) - 1)}`).join(', ')}]`);
    refused('markdown', `---\n${bomb.join('\n')}\n---\n`, { taskId: 't' }, 500);
    refused('markdown', '---\n- just\n- a list\n---\n');
    expect(refused('markdown', '---\ncheckpoint: chk-1\ncreated: [1, 2]\n---\n').field).toBe('front matter: created');
    refused('markdown', '---\ncheckpoint: a\ncheckpoint: b\n---\n');
    refused('markdown', '---\ncheckpoint: !!js/function "x"\n---\n');
    refused('markdown', `---\n${'['.repeat(20_000)}\n---\n`);
  });

  it('a section given twice, named with its line', () => {
    const error = refused('markdown', '## Essential Information\n\n### Next Actions\n- a\n\n### Next Actions\n- b\n');
    expect([error.line, error.field]).toEqual([6, 'Next Actions']);
  });

  it('a section longer than its field holds, named by section', () => {
    const error = refused('markdown', `### Current State\n${'x'.repeat(20_001)}\n`);
    expect(error.field).toContain('Current State');
  });

  it('oversized documents and a missing task', () => {
    refused('markdown', `## Problem\n${'x'.repeat(TEN_MB)}\n`);
    expect(refused('markdown', '## Problem\nx\n', {}).field).toBe('taskId');
  });
});
