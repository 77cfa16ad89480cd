/**
 * The resume prompt (issue 7, item 4): the seed examples fit 2,000 tokens
 * with every never-dropped part present; parts give way in priority order;
 * every budget down to one token gets a non-empty prompt within it.
 */
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import type { CheckpointInput } from '../../src/domain/checkpoint.js';
import { PROMPT_FLOOR, resumePrompt } from '../../src/service/resume-prompt.js';
import { materialize, SEEDS } from './fixtures/seeds.js';

const count = (text: string) => countTokens(text, { disallowedSpecial: new Set() });

/** A checkpoint with a long history: many steps, each with a file, a breadcrumbs section and a continuation note. */
function longHistory(steps: number): CheckpointInput {
  return {
    taskId: 'long-task',
    agentId: 'agent-9',
    executionState: {
      phase: 'implementing',
      completedItems: Array.from({ length: steps }, (_, i) => ({
        description: `Step ${i + 1}: wrote the handler for endpoint number ${i + 1} and its tests`,
        files: { created: [`src/handlers/endpoint-${i + 1}.ts`] },
      })),
      pendingItems: [{ id: 'p1', description: 'Wire the router to every handler' }, 'Run the load test'],
      currentFocus: 'p1',
    },
    contextSummary: { keyDecisions: [{ decision: 'One file per handler', rationale: 'small diffs, easy review' }], constraints: ['No new dependencies'] },
    recovery: { continuationPrompt: 'Continue with the router. The handlers are done and tested.' },
    extensions: {
      markdown: {
        preamble: '',
        sections: [
          { heading: '## Problem', text: '\nThe API has no handlers for the new endpoints.\n' },
          { heading: '## Session Intent', text: '\nShip all endpoints this week.\n' },
          { heading: '### Breadcrumbs', text: '\n| Type | Reference | Hint |\n|---|---|---|\n| file | `src/router.ts` | where routes are listed |\n' },
        ],
      },
    },
  };
}

describe('the seed examples', () => {
  for (const seed of SEEDS) {
    it(`${seed.name}: fits 2,000 tokens with every never-dropped part present`, () => {
      const prompt = resumePrompt(materialize(seed.input), 2000);
      expect(prompt.tokens).toBeLessThanOrEqual(2000);
      expect(prompt.tokens).toBe(count(prompt.text));
      expect(prompt.budget).toBe(2000);
      for (const { heading, phrase } of seed.must) {
        expect(prompt.text).toContain(heading);
        expect(prompt.text).toContain(phrase);
      }
      expect(prompt.text).toContain('Do not redo completed work');
      expect(prompt.dropped).not.toContain('one-line-form');
    });
  }

  it('the real session is over 2,000 tokens whole, and at 2,000 only its older completed steps are summarised', () => {
    const seed = SEEDS.find((s) => s.name.includes('real session'))!;
    const checkpoint = materialize(seed.input);
    expect(resumePrompt(checkpoint).tokens).toBeGreaterThan(2000);
    const prompt = resumePrompt(checkpoint, 2000);
    expect(prompt.dropped).toEqual(['completed-steps']);
    expect(prompt.text).toMatch(/… and \d+ earlier steps done\./);
    expect(prompt.text).toContain('Started CLI two migration');
    expect(prompt.text).toContain('## Files to review');
    expect(prompt.text).toContain('## Breadcrumbs');
  });

  it('the builder-state example renders the template of its seed: task, phase, steps, decisions and why, files, verification', () => {
    const prompt = resumePrompt(materialize(SEEDS[0]!.input));
    expect(prompt.budget).toBeNull();
    expect(prompt.dropped).toEqual([]);
    for (const text of [
      '# Resuming task: US-003',
      'Phase: implementing.',
      '- Created DarkModeToggle component',
      'Use CSS custom properties for theming — why: Avoids runtime style calculation',
      'Partial work: Added useTheme import, started onClick handler',
      '`src/contexts/ThemeContext.tsx` — created',
      'Contract: US-003.verificationContract',
      '## Instructions',
    ]) {
      expect(prompt.text).toContain(text);
    }
    // The current step is not listed again among the next actions.
    expect(prompt.text.match(/Wire toggle to ThemeContext/g)).toHaveLength(1);
  });
});

describe('fitting by priority', () => {
  const checkpoint = materialize(longHistory(40));
  const whole = resumePrompt(checkpoint).tokens;

  it('summarises older completed steps first, keeping the most recent', () => {
    const prompt = resumePrompt(checkpoint, whole - 50);
    expect(prompt.dropped).toEqual(['completed-steps']);
    expect(prompt.text).toMatch(/… and \d+ earlier steps done\./);
    expect(prompt.text).toContain('Step 40:');
    expect(prompt.text).not.toContain('Step 1:');
  });

  it('gives parts up in order as the budget shrinks: completed steps, artifact trail, breadcrumbs, then the rest', () => {
    // The droppable parts this checkpoint has, lowest priority first.
    const present = ['completed-steps', 'artifact-trail', 'breadcrumbs', 'continuation-note', 'rules', 'instructions'];
    let deepest = 0;
    for (let budget = whole; budget >= 60; budget -= 7) {
      const prompt = resumePrompt(checkpoint, budget);
      expect(prompt.tokens).toBeLessThanOrEqual(budget);
      const given = present.filter((name) => prompt.dropped.includes(name));
      // A part gives way only after every part of lower priority has.
      expect(given).toEqual(present.slice(0, given.length));
      expect(given.length).toBeGreaterThanOrEqual(deepest);
      deepest = given.length;
    }
    expect(deepest).toBe(present.length);
  });

  it('keeps the never-dropped parts while anything else can still give way', () => {
    const prompt = resumePrompt(checkpoint, 150);
    expect(prompt.dropped).not.toContain('one-line-form');
    for (const text of ['## Problem', '## Session intent', '## Decisions already made', '## Current state', '## Next actions', 'Wire the router']) {
      expect(prompt.text).toContain(text);
    }
  });
});

describe('small budgets', () => {
  it(`gives, from ${PROMPT_FLOOR} tokens, the current step and the next action, one line each`, () => {
    for (const seed of SEEDS.filter((s) => s.name.startsWith('000') || s.name.includes('real session'))) {
      const prompt = resumePrompt(materialize(seed.input), PROMPT_FLOOR);
      expect(prompt.tokens).toBeLessThanOrEqual(PROMPT_FLOOR);
      expect(prompt.dropped).toContain('one-line-form');
      const lines = prompt.text.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^Now: /);
      expect(lines[1]).toMatch(/^Next: /);
    }
  });

  it('is never empty and never over budget, down to one token', () => {
    for (const seed of SEEDS) {
      const checkpoint = materialize(seed.input);
      for (let budget = 1; budget <= 120; budget += 1) {
        const prompt = resumePrompt(checkpoint, budget);
        expect(prompt.text.trim()).not.toBe('');
        expect(prompt.tokens).toBe(count(prompt.text));
        expect(prompt.tokens).toBeLessThanOrEqual(budget);
      }
    }
  });

  it('a small budget gives a small prompt: every never-dropped part in one line once the budget holds them', () => {
    const prompt = resumePrompt(materialize(longHistory(40)), 80);
    for (const label of ['Now: ', 'Next: ', 'Task long-task', 'Problem: ', 'Intent: ', 'Decisions: ']) expect(prompt.text).toContain(label);
  });
});

describe('hostile text', () => {
  it('counts special-token spellings as plain text', () => {
    const input: CheckpointInput = { taskId: 't', agentId: 'a', executionState: { currentFocus: 'print <|endoftext|> and <|im_start|>' } };
    const prompt = resumePrompt(materialize(input), 200);
    expect(prompt.text).toContain('<|endoftext|>');
    expect(prompt.tokens).toBe(count(prompt.text));
  });

  it('renders a 500,000-letter word and a megabyte of CJK text quickly, within budget', () => {
    const input: CheckpointInput = {
      taskId: 't',
      agentId: 'a',
      executionState: { currentFocus: 'y'.repeat(20_000), pendingItems: ['日本語のテキスト'.repeat(2_000)] },
      recovery: { continuationPrompt: 'x'.repeat(500_000) },
    };
    const started = performance.now();
    for (const budget of [undefined, 100_000, 2000, 100, 20]) {
      const prompt = resumePrompt(materialize(input), budget);
      if (budget !== undefined) expect(prompt.tokens).toBeLessThanOrEqual(budget);
    }
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

const text = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '-', '#', 'é', '日', '🎉', '|', '`', '<|endoftext|>', 'word ', '1', '\u0000'), maxLength: 120 });
const entry = fc.oneof(text, fc.record({ id: fc.option(fc.string({ minLength: 1, maxLength: 5 }), { nil: undefined }), description: text }));
const checkpoints = fc.record({
  completed: fc.array(entry, { maxLength: 40 }),
  pending: fc.array(entry, { maxLength: 10 }),
  blocked: fc.array(entry, { maxLength: 3 }),
  focus: fc.option(text, { nil: undefined }),
  decisions: fc.array(fc.oneof(text, fc.record({ decision: text, rationale: text })), { maxLength: 8 }),
  problem: fc.option(text, { nil: undefined }),
  intent: fc.option(text, { nil: undefined }),
  note: fc.option(text, { nil: undefined }),
});

type Generated = typeof checkpoints extends fc.Arbitrary<infer T> ? T : never;

function generated(c: Generated): CheckpointInput {
  const sections = [
    ...(c.problem === undefined ? [] : [{ heading: '## Problem', text: c.problem }]),
    ...(c.intent === undefined ? [] : [{ heading: '## Session Intent', text: c.intent }]),
  ];
  return {
    taskId: 'prop-task',
    agentId: 'agent',
    executionState: { completedItems: c.completed, pendingItems: c.pending, blockedItems: c.blocked, ...(c.focus === undefined ? {} : { currentFocus: c.focus }) },
    contextSummary: { keyDecisions: c.decisions },
    ...(c.note === undefined ? {} : { recovery: { continuationPrompt: c.note } }),
    extensions: { markdown: { preamble: '', sections } },
  };
}

describe('properties over generated checkpoints and budgets', () => {
  it('stays within budget, is never empty, and keeps every never-dropped part while the budget allows', () => {
    fc.assert(
      fc.property(checkpoints, fc.integer({ min: 1, max: 120 }), (c, percent) => {
        const checkpoint = materialize(generated(c));
        const whole = resumePrompt(checkpoint);
        // Budgets around the whole prompt's size reach every rung of the ladder.
        const budget = Math.max(PROMPT_FLOOR, Math.round((whole.tokens * percent) / 100));
        const prompt = resumePrompt(checkpoint, budget);
        expect(prompt.tokens).toBe(count(prompt.text));
        expect(prompt.tokens).toBeLessThanOrEqual(budget);
        expect(prompt.text.trim()).not.toBe('');
        if (whole.tokens <= budget) {
          expect(prompt.text).toBe(whole.text);
          expect(prompt.dropped).toEqual([]);
        }
        if (!prompt.dropped.includes('one-line-form')) {
          // The structured form is kept: every never-dropped part has its section.
          for (const heading of ['## Current state', '## Next actions']) expect(prompt.text).toContain(heading);
          if (whole.text.includes('## Problem')) expect(prompt.text).toContain('## Problem');
          if (whole.text.includes('## Session intent')) expect(prompt.text).toContain('## Session intent');
          if (whole.text.includes('## Decisions already made')) expect(prompt.text).toContain('## Decisions already made');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never exceeds budgets below the floor either', () => {
    fc.assert(
      fc.property(checkpoints, fc.integer({ min: 1, max: PROMPT_FLOOR }), (c, budget) => {
        const prompt = resumePrompt(materialize(generated(c)), budget);
        expect(prompt.tokens).toBeLessThanOrEqual(budget);
        expect(prompt.text.trim()).not.toBe('');
      }),
      { numRuns: 300 },
    );
  });
});
