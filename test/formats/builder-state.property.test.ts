/**
 * Properties of the builder-state converter: any document of the format
 * comes back deep-equal after import and export, and any checkpoint within
 * what the format carries comes back equal after export and import.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckpointInput } from '../../src/domain/checkpoint.js';
import { FORMATS } from '../../src/formats/index.js';
import { anyText, comparable, externalId, filePath, jsonValue, timestamp, withSomeOf } from './arbitraries.js';
import { assertValidInput, materialize } from './support.js';

const format = FORMATS['builder-state'];
const phaseName = fc.constantFrom('planning', 'implementation', 'verification', 'documentation', 'complete', 'handoff');

const step = fc.record(
  { step: anyText, filesCreated: fc.array(filePath, { maxLength: 3 }), filesModified: fc.array(filePath, { maxLength: 3 }), filesDeleted: fc.array(filePath, { maxLength: 2 }), timestamp, note: anyText },
  { requiredKeys: ['step'] },
);
const decision = fc.record({ decision: anyText, rationale: anyText, timestamp, by: externalId, tag: jsonValue }, { requiredKeys: ['decision'] });
const currentStep = fc.oneof(fc.constant(null), fc.record({ description: anyText, startedAt: timestamp, partialWork: anyText }, { requiredKeys: [] }));
const verification = fc.oneof(
  fc.constant(null),
  fc.record({ contractRef: anyText, results: fc.array(fc.record({ activity: anyText, status: fc.constantFrom('pending', 'passed', 'failed', 'skipped'), runAt: timestamp }), { maxLength: 3 }) }),
);
const metadata = fc.record(
  { createdBy: externalId, lastUpdatedAt: timestamp, reason: fc.constantFrom('periodic', 'context_limit', 'failure', 'reassignment', 'rate_limit', 'manual'), previousAgents: fc.array(externalId, { maxLength: 3 }) },
  { requiredKeys: [] },
);
const checkpointObject = fc
  .tuple(
    fc.record(
      {
        phase: phaseName,
        completedSteps: fc.array(step, { maxLength: 4 }),
        pendingSteps: fc.array(anyText, { maxLength: 4 }),
        currentStep,
        decisions: fc.array(decision, { maxLength: 3 }),
        blockers: fc.array(anyText, { maxLength: 2 }),
        verification,
        metadata,
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.constantFrom('schemaVersion', 'notes', 'toString', 'x-origin'), jsonValue, { maxKeys: 2 }),
  )
  .map(([known, unknown]) => ({ ...unknown, ...known }));

/** A checkpoint object alone, or inside a whole builder-state.json as the seed example has it. */
const documentArb = fc.oneof(
  checkpointObject,
  fc.record({ sessionId: externalId, lastHeartbeat: timestamp, activePrd: fc.record({ id: externalId, currentStory: externalId, checkpoint: checkpointObject }) }),
  fc.record({ sessionId: externalId, activePrd: fc.constant(null), adhocQueue: fc.tuple(fc.record({ id: externalId }), fc.record({ id: externalId, checkpoint: checkpointObject })) }),
);

const item = fc.oneof(
  anyText,
  withSomeOf(
    fc.record(
      {
        description: anyText,
        files: withSomeOf(fc.record({ created: fc.array(filePath, { maxLength: 2 }), modified: fc.array(filePath, { maxLength: 2 }), deleted: fc.array(filePath, { maxLength: 2 }) }, { requiredKeys: [] }), 0),
        at: timestamp,
      },
      { requiredKeys: ['description'] },
    ),
    1,
  ),
);
const keyDecision = fc.oneof(anyText, withSomeOf(fc.record({ decision: anyText, rationale: anyText, at: timestamp, by: externalId }, { requiredKeys: ['decision'] }), 1));
const phase = fc.constantFrom('planning', 'implementing', 'testing', 'reviewing', 'complete', 'handoff' as const);

/** Checkpoints within what builder-state carries: phase, the three item lists, the focus, decisions and the agent. */
const inputArb: fc.Arbitrary<CheckpointInput> = fc.record({
  taskId: externalId,
  agentId: externalId,
  executionState: fc.record(
    {
      phase,
      completedItems: fc.array(item, { maxLength: 3 }),
      pendingItems: fc.array(anyText, { maxLength: 3 }),
      blockedItems: fc.array(anyText, { maxLength: 2 }),
      currentFocus: fc.option(anyText, { nil: null }),
    },
    { requiredKeys: [] },
  ),
  contextSummary: fc.record({ keyDecisions: fc.array(keyDecision, { maxLength: 3 }) }, { requiredKeys: [] }),
});

describe('builder-state properties', () => {
  it('render(parse(x)) is x, deep-equal', () => {
    fc.assert(
      fc.property(documentArb, (doc) => {
        const text = JSON.stringify(doc, null, 2);
        const input = format.parse(text, { taskId: 'task-1' });
        assertValidInput(input);
        expect(JSON.parse(format.render(materialize(input)))).toEqual(JSON.parse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('parse(render(c)) is c for every checkpoint within what the format carries', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const back = format.parse(format.render(materialize(input)), { taskId: input.taskId });
        expect(comparable(back)).toEqual(comparable(input));
      }),
      { numRuns: 1000 },
    );
  });
});
