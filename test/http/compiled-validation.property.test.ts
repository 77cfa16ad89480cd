/**
 * The compiled check of a create's body (`src/http/compiled-validation.ts`)
 * is a fast path before zod, never a judge of its own: every body it accepts
 * zod accepts too and returns unchanged, on bodies built near the schema's
 * edges (lengths near a limit in emoji, two UTF-16 units each, control characters in
 * ids, impossible dates, upper-case digests, unknown members, wrong types,
 * numbers out of range) and on arbitrary JSON. And it does accept the
 * bodies agents send, or it would save nothing. Over HTTP, a body it
 * refuses is answered with zod's own error document.
 */
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkpointInput } from '../../src/domain/checkpoint.js';
import { ajvFor, compiledCheck, jsonSchemaOf, minLengthsAtMostOne, typeDispatched } from '../../src/http/compiled-validation.js';
import { EvolvingBodies } from '../../loadtest/lib/http-payloads.js';
import { auth, checkpointBody, useTestApp } from '../support/app.js';

const check = compiledCheck(checkpointInput)!;

/** Strings near a limit of `max` UTF-16 units, some of them emoji (two units each), some with control characters. */
const edgeString = (max: number) =>
  fc.oneof(
    // Control characters are what an id refuses: these strings leave them out.
    // eslint-disable-next-line no-control-regex
    { weight: 12, arbitrary: fc.string({ minLength: 1, maxLength: 12 }).filter((text) => !/[\u0000-\u001f\u007f]/.test(text)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
    fc.constantFrom('', 'a', 'x'.repeat(max), 'x'.repeat(max + 1), '😀'.repeat(Math.floor(max / 2)), '😀'.repeat(Math.floor(max / 2)) + 'x', 'tab\there', 'nul\u0000', 'del\u007f', 'café', 'a b'),
    fc.nat({ max: 3 }).map((n) => '😀'.repeat(n) + 'x'.repeat(Math.max(0, max - n - 1 + (n % 3)))),
  );

const jsonish = fc.jsonValue({ maxDepth: 2 });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
/** Mostly `valid`, now and then anything. */
const mostly = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 10, arbitrary: valid }, { weight: 1, arbitrary: jsonish });
const date = fc.constantFrom('2025-01-02T03:04:05Z', '2025-01-02T03:04:05.123+02:00', '2025-02-30T00:00:00Z', '2024-02-29T00:00:00Z', '2025-01-02 03:04:05Z', '2025-01-02T03:04:05', 'yesterday');
const sha = fc.constantFrom('a'.repeat(64), 'A'.repeat(64), 'a'.repeat(63), 'g'.repeat(64));
const fileRef = fc.oneof(edgeString(4096), fc.record({ path: edgeString(4096), sha256: maybe(sha) }, { requiredKeys: [] }), jsonish);
const item = fc.oneof(
  { weight: 3, arbitrary: edgeString(20_000) },
  fc.record(
    {
      id: maybe(edgeString(200)),
      description: edgeString(20_000),
      files: maybe(fc.record({ created: maybe(fc.array(fileRef, { maxLength: 2 })), modified: maybe(fc.array(fileRef, { maxLength: 2 })), extra: maybe(jsonish) }, { requiredKeys: [] })),
      at: maybe(date),
      blocker: maybe(edgeString(20_000)),
      other: maybe(jsonish),
    },
    { requiredKeys: [] },
  ),
  { weight: 1, arbitrary: jsonish },
);
const number = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom(0.5, 1e9, 1e9 + 1, 1e300, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 100, 100.5, -0));
const body = fc.record(
  {
    schemaVersion: maybe(fc.constantFrom('1.0', '2.0', 1)),
    taskId: mostly(edgeString(200)),
    agentId: mostly(edgeString(200)),
    agentType: maybe(edgeString(200)),
    iteration: maybe(number),
    codeVersion: maybe(fc.constantFrom('abc123', 'has space', '', 'ü')),
    parentId: maybe(fc.constantFrom('0b8f4a52-6f40-4d6e-9d0e-3a5f3c9d1e2f', '0B8F4A52-6F40-4D6E-9D0E-3A5F3C9D1E2F', 'not-a-uuid', '00000000-0000-0000-0000-000000000000')),
    executionState: maybe(
      mostly(
        fc.record(
          {
            phase: maybe(fc.constantFrom('planning', 'handoff', 'Planning', 'done')),
            completedItems: maybe(fc.array(item, { maxLength: 3 })),
            pendingItems: maybe(fc.array(item, { maxLength: 3 })),
            currentFocus: maybe(fc.oneof(edgeString(20_000), fc.constant(null))),
            extra: maybe(jsonish),
          },
          { requiredKeys: [] },
        ),
      ),
    ),
    contextSummary: maybe(fc.record({ keyDecisions: maybe(fc.array(fc.oneof(item, fc.record({ decision: edgeString(20_000), by: maybe(edgeString(200)), at: maybe(date) }, { requiredKeys: [] })), { maxLength: 3 })) }, { requiredKeys: [] })),
    metrics: maybe(fc.record({ tokensConsumed: maybe(number), contextUtilization: maybe(number), filesModified: maybe(fc.array(fileRef, { maxLength: 2 })), testsStatus: maybe(fc.record({ passed: maybe(number), coveragePercent: maybe(number) }, { requiredKeys: [] })) }, { requiredKeys: [] })),
    recovery: maybe(fc.record({ lastSuccessfulState: maybe(fc.oneof(edgeString(200), fc.constant(null))), continuationPrompt: maybe(edgeString(20)) }, { requiredKeys: [] })),
    compliance: maybe(fc.record({ retentionPolicy: maybe(fc.constantFrom('P30D', 'P1Y2M', 'PT', '30 days')), legalHold: maybe(fc.oneof(fc.boolean(), fc.constant('yes'))), unknown: maybe(fc.constant(1)) }, { requiredKeys: [] })),
    labels: maybe(fc.dictionary(fc.constantFrom('team', 'a.b/c-d_e', 'bad key', '', 'ü', 'x'.repeat(101)), fc.oneof(edgeString(1000), fc.integer(), fc.boolean(), fc.constant(null)), { maxKeys: 3 })),
    extensions: maybe(fc.dictionary(fc.string({ maxLength: 5 }), jsonish, { maxKeys: 3 })),
    unknownTopLevel: fc.option(fc.constant(true), { nil: undefined, freq: 8 }),
  },
  { requiredKeys: [] },
);

describe('the compiled check of a create body', () => {
  it('accepts only bodies zod accepts, and zod returns those unchanged', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 5, arbitrary: body }, { weight: 1, arbitrary: fc.jsonValue() }), (value) => {
        const json = JSON.parse(JSON.stringify(value)) as unknown;
        if (!check(json)) return;
        accepted += 1;
        const parsed = checkpointInput.safeParse(json);
        expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
        expect(parsed.data).toStrictEqual(json);
      }),
      { numRuns: 20_000 },
    );
    // The generator must reach the accepting side often enough for the property to say something (~200 of
    // 20,000 here: strings near a limit in emoji, which the check counts in UTF-16 units, go to zod).
    expect(accepted).toBeGreaterThan(100);
  });

  it('judges every value as the schema zod wrote does, its anyOf by type merged into one schema of several types', () => {
    // Lengths counted as the compiled check counts them: what differs is the merge alone.
    const asWritten = new Ajv({ unicodeRegExp: false, validateFormats: false, strict: false, unicode: false, logger: false }).compile(jsonSchemaOf(checkpointInput));
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 5, arbitrary: body }, { weight: 1, arbitrary: fc.jsonValue() }), (value) => {
        const json = JSON.parse(JSON.stringify(value)) as unknown;
        const verdict = check(json);
        if (verdict) accepted += 1;
        expect(verdict).toBe(asWritten(json));
      }),
      { numRuns: 20_000 },
    );
    expect(accepted).toBeGreaterThan(100);
  });

  it('merges only an anyOf whose alternatives each name one type and constrain only values of it', () => {
    const str = { type: 'string', maxLength: 3 };
    const obj = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'], additionalProperties: false };
    expect(typeDispatched({ anyOf: [str, obj], description: 'item' })).toEqual({ description: 'item', type: ['string', 'object'], maxLength: 3, properties: { a: { type: 'number' } }, required: ['a'], additionalProperties: false });
    // Nested anyOf are merged too.
    expect(typeDispatched({ properties: { x: { anyOf: [{ type: 'string' }, { type: 'null' }] } } })).toEqual({ properties: { x: { type: ['string', 'null'] } } });
    // Kept: overlapping types, a keyword for every type, a keyword of another type, two alternatives of one type, a node with a type of its own.
    const kept = [
      { anyOf: [{ type: 'integer' }, { type: 'number', minimum: 1 }] },
      { anyOf: [{ type: 'string', const: 'a' }, { type: 'null' }] },
      { anyOf: [{ type: 'string', minimum: 1 }, { type: 'null' }] },
      { anyOf: [{ type: 'string', maxLength: 1 }, { type: 'string', pattern: '^a' }] },
      { type: 'string', anyOf: [{ type: 'string' }, { type: 'null' }] },
      { anyOf: [{ type: ['string', 'null'] }, { type: 'object' }] },
    ];
    for (const schema of kept) expect(typeDispatched(schema)).toEqual(schema);
  });

  it('counts lengths in UTF-16 units only where no minLength exceeds 1', () => {
    expect(minLengthsAtMostOne(jsonSchemaOf(checkpointInput))).toBe(true);
    expect(minLengthsAtMostOne({ properties: { a: { type: 'string', minLength: 1 }, b: { items: [{ minLength: 0 }] } } })).toBe(true);
    expect(minLengthsAtMostOne({ properties: { a: { type: 'string', minLength: 1 }, b: { items: [{ minLength: 2 }] } } })).toBe(false);
    // Two emoji are four UTF-16 units: counted in units, a minimum of three would pass them, as zod would not.
    const schema = { type: 'string', minLength: 3 };
    expect(ajvFor(minLengthsAtMostOne(schema)).compile(schema)('😀😀')).toBe(false);
    expect(ajvFor(true).compile({ type: 'string', maxLength: 3 })('😀😀')).toBe(false);
  });

  it('accepts the bodies agents send: the tests’ own and the benchmark’s evolving ones', () => {
    expect(check(JSON.parse(JSON.stringify(checkpointBody('task-1'))))).toBe(true);
    const bodies = new EvolvingBodies(7);
    for (let n = 0; n < 200; n++) expect(check(JSON.parse(bodies.next(`task-${n % 10}`, n)))).toBe(true);
  });

  const t = useTestApp();

  it('answers a body it refuses with zod’s error document, and stores nothing', async () => {
    const sha = 'A'.repeat(64);
    // Upper-case hex: JSON Schema's pattern has no `i` flag, so the compiled check refuses what zod accepts.
    const upper = checkpointBody('task-upper', { metrics: { filesModified: [{ path: 'src/a.ts', sha256: sha }] } });
    expect(check(JSON.parse(JSON.stringify(upper)))).toBe(false);
    const created = await t().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth('writer'), payload: upper });
    expect(created.statusCode, created.body).toBe(201);
    const tooLong = checkpointBody('task-long', { agentId: '😀'.repeat(201) });
    const refused = await t().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth('writer'), payload: tooLong });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'agentId' }] });
    const listed = await t().app.inject({ method: 'GET', url: '/v1/tasks/task-long/checkpoints', headers: auth('writer') });
    expect(listed.statusCode).toBe(404);
  });
});
