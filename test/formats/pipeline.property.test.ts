/**
 * Properties of the pipeline converter: any checkpoint-{storyId}.json comes
 * back deep-equal after import and export, and any checkpoint within what the
 * format carries comes back equal after export and import.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckpointInput } from '../../src/domain/checkpoint.js';
import { FORMATS } from '../../src/formats/index.js';
import { anyText, comparable, externalId, jsonValue, timestamp } from './arbitraries.js';
import { assertValidInput, materialize } from './support.js';

const format = FORMATS.pipeline;
const score = fc.oneof(fc.integer({ min: 0, max: 100 }), fc.double({ min: 0, max: 100, noNaN: true }));
const verdict = fc.oneof(fc.constantFrom('GO', 'NO-GO', 'PASS', 'CONCERNS', 'WAIVED', 'FAIL'), anyText);

const documentArb = fc
  .tuple(
    fc.record(
      {
        storyId: externalId,
        stage: fc.integer({ min: 0, max: 3 }),
        agentId: externalId,
        tasksCompleted: fc.array(anyText, { maxLength: 5 }),
        tasksRemaining: fc.array(anyText, { maxLength: 5 }),
        lastAction: anyText,
        timestamp,
        planScore: fc.integer({ min: 0, max: 4 }),
        readiness: fc.integer({ min: 1, max: 10 }),
        verdict,
        reason: anyText,
        qualityScore: score,
        issues: anyText,
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.constantFrom('worker', 'attempt', 'valueOf', 'constructor'), jsonValue, { maxKeys: 2 }),
  )
  .map(([known, unknown]) => ({ ...unknown, ...known }));

const labels = fc.record(
  { 'pipeline.planScore': fc.integer({ min: 0, max: 4 }), 'pipeline.readiness': fc.integer({ min: 1, max: 10 }), 'pipeline.verdict': verdict, 'pipeline.qualityScore': score },
  { requiredKeys: [] },
);

/** Checkpoints within what a pipeline carries: its task and agent, a phase a stage names, task lists and the scores. */
const inputArb: fc.Arbitrary<CheckpointInput> = fc.record({
  taskId: externalId,
  agentId: externalId,
  executionState: fc.record(
    { phase: fc.constantFrom('planning', 'implementing', 'reviewing' as const), completedItems: fc.array(anyText, { maxLength: 4 }), pendingItems: fc.array(anyText, { maxLength: 4 }) },
    { requiredKeys: ['completedItems', 'pendingItems'] },
  ),
  labels,
});

describe('pipeline properties', () => {
  it('render(parse(x)) is x, deep-equal', () => {
    fc.assert(
      fc.property(documentArb, (doc) => {
        const text = JSON.stringify(doc);
        const input = format.parse(text, 'storyId' in doc ? {} : { taskId: 'STORY-1' });
        assertValidInput(input);
        expect(JSON.parse(format.render(materialize(input)))).toEqual(JSON.parse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('parse(render(c)) is c for every checkpoint within what the format carries', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const back = format.parse(format.render(materialize(input)), {});
        expect(comparable(back)).toEqual(comparable(input));
      }),
      { numRuns: 1000 },
    );
  });
});
