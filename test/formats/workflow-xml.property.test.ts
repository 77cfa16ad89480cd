/**
 * Properties of the workflow-xml converter: any document of the three kinds
 * comes back equal after canonical whitespace, and any checkpoint within what
 * `<workflow_checkpoint>` carries comes back equal after export and import.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckpointInput } from '../../src/domain/checkpoint.js';
import { FORMATS } from '../../src/formats/index.js';
import { attributeText, comparable, externalId, filePath, withSomeOf, xmlText } from './arbitraries.js';
import { assertValidInput, canonicalXml, materialize } from './support.js';
import { workflowDocument } from './xml-documents.js';

const format = FORMATS['workflow-xml'];

const item = fc.oneof(xmlText, withSomeOf(fc.record({ description: xmlText, id: attributeText, priority: attributeText }, { requiredKeys: ['description'] }), 1));
const decision = fc.oneof(xmlText, withSomeOf(fc.record({ decision: xmlText, rationale: attributeText, by: attributeText }, { requiredKeys: ['decision'] }), 1));
const file = fc.oneof(filePath, fc.record({ path: filePath, status: fc.constantFrom('created', 'modified', 'deleted') }));

/** Checkpoints within what `<workflow_checkpoint>` carries: phase, remaining tasks, focus, decisions, artifacts, continuation. */
const inputArb: fc.Arbitrary<CheckpointInput> = fc.record({
  taskId: externalId,
  agentId: externalId,
  executionState: fc.record(
    { phase: fc.constantFrom('planning', 'implementing', 'testing', 'reviewing', 'complete', 'handoff' as const), pendingItems: fc.array(item, { maxLength: 3 }), currentFocus: xmlText },
    { requiredKeys: [] },
  ),
  contextSummary: fc.record({ keyDecisions: fc.array(decision, { maxLength: 3 }) }, { requiredKeys: [] }),
  metrics: fc.record({ filesModified: fc.array(file, { maxLength: 3 }) }, { requiredKeys: [] }),
  recovery: fc.record({ continuationPrompt: xmlText }, { requiredKeys: [] }),
});

describe('workflow-xml properties', () => {
  it('render(parse(x)) is x after canonical whitespace', () => {
    fc.assert(
      fc.property(workflowDocument, (text) => {
        const input = format.parse(text, { taskId: 'workflow-1' });
        assertValidInput(input);
        expect(canonicalXml(format.render(materialize(input)))).toBe(canonicalXml(text));
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
