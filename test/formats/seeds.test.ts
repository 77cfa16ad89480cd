/**
 * Every example in the seed documents imports and exports back equal: JSON
 * deep-equal, XML equal after canonical whitespace, markdown equal section by
 * section with its deltas in order (and, in fact, byte for byte).
 */
import { describe, expect, it } from 'vitest';
import { FORMATS, FormatError } from '../../src/formats/index.js';
import { assertValidInput, canonicalXml, fixture, markdownSections, materialize } from './support.js';

describe('seed examples import and export back equal', () => {
  it('builder-state: the whole builder-state.json with its checkpoint', () => {
    const text = fixture('seed-000-builder-state.json');
    const input = FORMATS['builder-state'].parse(text, { taskId: 'US-003' });
    assertValidInput(input);
    expect(input.agentId).toBe('react-dev');
    expect(input.executionState?.phase).toBe('implementing');
    expect(input.executionState?.currentFocus).toBe('Wire toggle to ThemeContext');
    expect(input.executionState?.completedItems?.[1]).toEqual({
      description: 'Added ThemeContext for state management',
      files: { created: ['src/contexts/ThemeContext.tsx'], modified: ['src/App.tsx'] },
      at: '2026-02-28T10:05:00Z',
    });
    expect(input.contextSummary?.keyDecisions?.[0]).toEqual({
      decision: 'Use CSS custom properties for theming',
      rationale: 'Avoids runtime style calculation, better performance',
      at: '2026-02-28T10:02:00Z',
    });
    expect(JSON.parse(FORMATS['builder-state'].render(materialize(input)))).toEqual(JSON.parse(text));
  });

  it('pipeline: the stage 3 checkpoint, whose storyId is its task', () => {
    const text = fixture('seed-002-pipeline-stage3.json');
    const input = FORMATS.pipeline.parse(text, {});
    assertValidInput(input);
    expect(input).toMatchObject({
      taskId: 'PROJ-42',
      agentId: 'abc-123-def',
      executionState: { phase: 'reviewing', completedItems: ['PROJ-101', 'PROJ-102', 'PROJ-103', 'PROJ-104', 'PROJ-105'], pendingItems: [] },
      labels: { 'pipeline.verdict': 'PASS', 'pipeline.qualityScore': 92 },
    });
    expect(JSON.parse(FORMATS.pipeline.render(materialize(input)))).toEqual(JSON.parse(text));
  });

  it('resume-block: the CHECKPOINT RESUME template filled from the stage 3 checkpoint', () => {
    const doc = JSON.parse(fixture('seed-002-pipeline-stage3.json')) as { tasksCompleted: string[]; tasksRemaining: string[]; lastAction: string };
    const expected = fixture('seed-002-resume-block-template.txt')
      .replace('{tasksCompleted joined by ", "}', doc.tasksCompleted.join(', '))
      .replace('{tasksRemaining joined by ", "}', doc.tasksRemaining.join(', '))
      .replace('{lastAction}', doc.lastAction)
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n');
    const input = FORMATS.pipeline.parse(fixture('seed-002-pipeline-stage3.json'), {});
    expect(FORMATS['resume-block'].render(materialize(input))).toBe(expected);
  });

  for (const name of ['seed-003-workflow-corrected.xml', 'seed-003-approval.xml', 'seed-003-error.xml']) {
    it(`workflow-xml: ${name}`, () => {
      const text = fixture(name);
      const input = FORMATS['workflow-xml'].parse(text, { taskId: 'workflow-7' });
      assertValidInput(input);
      expect(canonicalXml(FORMATS['workflow-xml'].render(materialize(input)))).toBe(canonicalXml(text));
    });
  }

  it('workflow-xml: the phase boundary example as printed is refused at its mismatched closing tag', () => {
    const error = catchFormatError(() => FORMATS['workflow-xml'].parse(fixture('seed-003-workflow.xml'), { taskId: 'workflow-7' }));
    expect(error.line).toBe(6);
    expect(error.column).toBe(53);
    expect(error.toFieldError()).toEqual({ field: 'line 6, column 53', message: expect.stringContaining("closing tag 'next_stage'") });
  });

  it('workflow-xml: the mapped elements of the three examples', () => {
    const workflow = FORMATS['workflow-xml'].parse(fixture('seed-003-workflow-corrected.xml'), { taskId: 't' });
    expect(workflow).toMatchObject({
      executionState: { pendingItems: ['items_still_pending'], currentFocus: 'specific_action_to_take' },
      contextSummary: {
        keyDecisions: [
          { decision: 'chosen_approach_with_rationale', id: 'architecture' },
          { decision: 'selected_tools_and_libraries', id: 'technology' },
        ],
      },
      metrics: { filesModified: ['file_created_or_modified', 'configuration_change'] },
      recovery: { continuationPrompt: 'information_needed_for_continuation' },
    });
    // The example's next_stage lists every stage as a placeholder; it names no phase, so none is set.
    expect(workflow.executionState?.phase).toBeUndefined();
    const error = FORMATS['workflow-xml'].parse(fixture('seed-003-error.xml'), { taskId: 't' });
    expect(error.executionState).toEqual({
      completedItems: ['work_completed_before_error'],
      pendingItems: ['specific_actions_to_resolve_error'],
      currentFocus: 'where_to_resume_workflow',
    });
  });

  for (const [label, text] of [
    ['the structure template', fixture('seed-004-structure.md')],
    ['the structure template with a delta appended', `${fixture('seed-004-structure.md')}\n${fixture('seed-004-delta.md')}`],
  ] as const) {
    it(`markdown: ${label}`, () => {
      const input = FORMATS.markdown.parse(text, { taskId: 'chk-task' });
      assertValidInput(input);
      const output = FORMATS.markdown.render(materialize(input));
      expect(markdownSections(output)).toEqual(markdownSections(text));
      expect(output).toBe(text);
    });
  }

  it('markdown: the template sections land in their fields, and the delta stays in order', () => {
    const text = `${fixture('seed-004-structure.md')}\n${fixture('seed-004-delta.md')}`;
    const input = FORMATS.markdown.parse(text, { taskId: 'chk-task' });
    expect(input.contextSummary?.keyDecisions).toEqual(['[User decisions that are locked in and should not be re-asked]']);
    expect(input.executionState?.currentFocus).toBe('[What exists now - completed work, current status]');
    expect(input.executionState?.pendingItems).toEqual(['[What comes next - pending work, blockers]']);
    expect(input.contextSummary?.constraints).toEqual(['[Constraints and preferences the agent must follow]']);
    const headings = markdownSections(FORMATS.markdown.render(materialize(input))).sections.map(([heading]) => heading);
    expect(headings.slice(-5)).toEqual(['## Completion', '## Delta: <ISO-8601 timestamp>', '### What Changed', '### Artifacts', '### Status Transitions']);
  });
});

function catchFormatError(run: () => unknown): FormatError {
  try {
    run();
  } catch (error) {
    if (error instanceof FormatError) return error;
    throw error;
  }
  throw new Error('expected a FormatError');
}
