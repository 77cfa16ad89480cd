/**
 * Properties of the markdown converter: any checkpoint file comes back byte
 * for byte (so section by section, deltas in order) after import and export,
 * and any checkpoint within what the format carries comes back equal after
 * export and import.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckpointInput } from '../../src/domain/checkpoint.js';
import { FORMATS } from '../../src/formats/index.js';
import { comparable, externalId } from './arbitraries.js';
import { markdownDocument, words } from './markdown-documents.js';
import { assertValidInput, markdownSections, materialize } from './support.js';

const format = FORMATS.markdown;
const entries = fc.array(words, { maxLength: 4 });
const file = fc.oneof(
  fc.constantFrom('src/a.ts', 'docs/read me.md'),
  fc.record({ path: fc.constantFrom('src/b.ts', 'x'), status: fc.constantFrom('created', 'modified'), keyChange: words }, { requiredKeys: ['path', 'status'] }),
);
const focus = fc.array(words, { minLength: 1, maxLength: 3 }).map((lines) => lines.join('\n'));

/** Checkpoints within what a markdown file carries: decisions, play-by-play, artifacts, current state, next actions, rules. */
const inputArb: fc.Arbitrary<CheckpointInput> = fc.record({
  taskId: externalId,
  agentId: externalId,
  executionState: fc.record({ completedItems: entries, pendingItems: entries, currentFocus: focus }, { requiredKeys: [] }),
  contextSummary: fc.record({ keyDecisions: entries, constraints: entries }, { requiredKeys: [] }),
  metrics: fc.record({ filesModified: fc.array(file, { maxLength: 3 }) }, { requiredKeys: [] }),
});

describe('markdown properties', () => {
  it('render(parse(x)) is x', () => {
    fc.assert(
      fc.property(markdownDocument, (text) => {
        const input = format.parse(text, { taskId: 'task-md' });
        assertValidInput(input);
        const output = format.render(materialize(input));
        expect(markdownSections(output.replaceAll('\r\n', '\n'))).toEqual(markdownSections(text.replaceAll('\r\n', '\n')));
        expect(output).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });

  it('parse(render(c)) is c for every checkpoint within what the format carries', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const back = format.parse(format.render(materialize(input)), { taskId: input.taskId, agentId: input.agentId });
        expect(comparable(back)).toEqual(comparable(input));
      }),
      { numRuns: 1000 },
    );
  });
});
