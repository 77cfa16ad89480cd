/** Bad input as request bodies: generated and random JSON or bytes sent to create, patch, finalize and links, all refused without a 5xx or a state change. */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { checkpointInput } from '../../../../src/domain/checkpoint.js';
import { finalizeBody, linkBody } from '../../../../src/domain/requests.js';
import { auth, checkpointBody } from '../../../support/app.js';
import { fuzz, garbageIdempotencyKey, garbageIfMatch, ids, JSON_TYPE, MERGE_PATCH, type Req, unchanged, useFixtures, validIdempotencyKey } from './harness.js';

// ---------------------------------------------------------------------------
// Generators.
// ---------------------------------------------------------------------------

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON values with strings of every kind, lone surrogates included (`binary` unit). */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 4, stringUnit: 'grapheme' }),
  fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }),
  fc.constantFrom(null, '', 0, -1, 1e308, -1e308, 5e-324, 2 ** 53 + 1, [], {}, 'x'.repeat(300), '\u0000', '\ud800', { '': null }),
);

function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (isObject(value)) return Object.entries(value).some(([k, v]) => hasLoneSurrogate(k) || hasLoneSurrogate(v));
  return false;
}

/** Paths into a valid create body that mutations set or delete. */
const BODY_PATHS: (string | number)[][] = [
  ['taskId'],
  ['agentId'],
  ['agentType'],
  ['iteration'],
  ['parentId'],
  ['executionState'],
  ['executionState', 'phase'],
  ['executionState', 'completedItems'],
  ['executionState', 'completedItems', 0],
  ['executionState', 'completedItems', 1, 'files', 'created', 0],
  ['executionState', 'pendingItems', 0, 'files', 'modified', 0, 'sha256'],
  ['executionState', 'currentFocus'],
  ['contextSummary', 'keyDecisions', 0],
  ['contextSummary', 'keyDecisions', 0, 'at'],
  ['metrics', 'tokensConsumed'],
  ['metrics', 'contextUtilization'],
  ['metrics', 'testsStatus'],
  ['recovery', 'continuationPrompt'],
  ['compliance'],
  ['compliance', 'retentionPolicy'],
  ['compliance', 'hash'],
  ['labels'],
  ['labels', 'team'],
  ['extensions'],
];

type Mutation = { op: 'set'; path: (string | number)[]; value: unknown } | { op: 'delete'; path: (string | number)[] } | { op: 'add'; key: string; value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('set' as const), path: fc.constantFrom(...BODY_PATHS), value: anyJson }),
  fc.record({ op: fc.constant('delete' as const), path: fc.constantFrom(...BODY_PATHS) }),
  fc.record({ op: fc.constant('add' as const), key: fc.string({ maxLength: 12 }), value: anyJson }),
);

function mutate(base: Record<string, unknown>, mutations: Mutation[]): Record<string, unknown> {
  const body = structuredClone(base);
  for (const m of mutations) {
    if (m.op === 'add') {
      Object.defineProperty(body, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
      continue;
    }
    let node: unknown = body;
    for (const step of m.path.slice(0, -1)) {
      node = isObject(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[step] : undefined;
    }
    if (!isObject(node) && !Array.isArray(node)) continue;
    const last = m.path[m.path.length - 1]!;
    if (m.op === 'delete') delete (node as Record<string | number, unknown>)[last];
    else (node as Record<string | number, unknown>)[last] = m.value;
  }
  return body;
}

/** Changes that make any create body invalid, whatever else it holds. */
const CREATE_INVALIDATORS: ((body: Record<string, unknown>) => Record<string, unknown>)[] = [
  (b) => ({ ...b, taskId: 42 }),
  (b) => ({ ...b, agentId: '' }),
  (b) => ({ ...b, iteration: -1 }),
  (b) => ({ ...b, zzUnknownMember: true }),
  (b) => ({ ...b, executionState: { phase: 'daydreaming' } }),
  (b) => ({ ...b, parentId: 'not-a-uuid' }),
  (b) => ({ ...b, compliance: { hash: 'f'.repeat(64) } }),
  (b) => ({ ...b, labels: { 'bad label!': 1 } }),
  (b) => ({ ...b, metrics: { tokensConsumed: -5 } }),
  (b) => ({ ...b, taskId: 'control\u0001char' }),
];

/**
 * A create body that must be refused: as generated when the schema refuses it
 * (or when it holds a lone surrogate, which RFC 8785 cannot canonicalize, so
 * it cannot be hashed and must be refused too); otherwise made invalid.
 */
function refusedCreateBody(body: unknown, pick: number): unknown {
  if (!isObject(body) || !checkpointInput.safeParse(body).success || hasLoneSurrogate(body)) return body;
  return CREATE_INVALIDATORS[pick % CREATE_INVALIDATORS.length]!(body);
}

/** Changes that make any merge patch of the active checkpoint invalid, whatever else it holds. */
const PATCH_INVALIDATORS: ((patch: Record<string, unknown>) => Record<string, unknown>)[] = [
  (p) => ({ ...p, id: '00000000-0000-7000-8000-000000000000' }),
  (p) => ({ ...p, version: 99 }),
  (p) => ({ ...p, taskId: 'another-task' }),
  (p) => ({ ...p, status: 'finalized' }),
  (p) => ({ ...p, createdAt: '1999-01-01T00:00:00.000Z' }),
  (p) => ({ ...p, agentId: '' }),
  (p) => ({ ...p, executionState: { phase: 'daydreaming' } }),
  (p) => ({ ...p, compliance: { hash: '0'.repeat(64) } }),
  (p) => ({ ...p, labels: { 'bad label!': true } }),
  (p) => ({ ...p, zzUnknownMember: 1 }),
  (p) => ({ ...p, metrics: { contextUtilization: 101 } }),
];

const currentIfMatch = fc.constantFrom('"1"', 'W/"1"', '1', '*', ' "1" ');
const staleIfMatch = fc.constantFrom('"2"', '"0"', '"999999999999999"', 'W/"7"');

describe('bad input: no 5xx, RFC 9457 problems, no stack traces, no state change', () => {
  useFixtures();

  it('POST /v1/checkpoints with generated JSON bodies (random values and mutated valid bodies)', async () => {
    const base = checkpointBody('fuzz-task-new');
    const body = fc.oneof(
      { weight: 1, arbitrary: anyJson },
      { weight: 3, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }).map((ms) => mutate(base, ms)) },
    );
    const req = fc
      .record({
        body,
        pick: fc.nat(),
        contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/merge-patch+json', 'application/json;'),
        key: fc.option(fc.oneof(validIdempotencyKey, garbageIdempotencyKey), { nil: undefined }),
        pretty: fc.boolean(),
      })
      .map(
        ({ body, pick, contentType, key, pretty }): Req => ({
          method: 'POST',
          url: '/v1/checkpoints',
          headers: { ...auth(), 'content-type': contentType, ...(key === undefined ? {} : { 'idempotency-key': key }) },
          payload: JSON.stringify(refusedCreateBody(body, pick), null, pretty ? 2 : undefined),
          mustReject: true,
        }),
      );
    await unchanged(() => fuzz(req, 200));
  });

  it('POST /v1/checkpoints with random bytes as the body', async () => {
    const req = fc
      .record({ bytes: fc.uint8Array({ maxLength: 200 }), contentType: fc.constantFrom('application/json', 'application/merge-patch+json', 'text/plain', 'application/octet-stream') })
      .filter(({ bytes }) => {
        // Skip the (vanishingly rare) bytes that happen to be a valid create body.
        try {
          const parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\ufeff/, '')) as unknown;
          return !checkpointInput.safeParse(parsed).success || hasLoneSurrogate(parsed);
        } catch {
          return true;
        }
      })
      .map(({ bytes, contentType }): Req => ({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), 'content-type': contentType }, payload: Buffer.from(bytes), mustReject: true }));
    await unchanged(() => fuzz(req, 80));
  });

  it('PATCH /v1/checkpoints/:id with generated merge patches and valid, stale, garbage or missing If-Match', async () => {
    const patch = fc.oneof(
      { weight: 1, arbitrary: anyJson },
      { weight: 3, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }).map((ms) => mutate({}, ms)) },
      { weight: 1, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 2 }).map((ms) => mutate(checkpointBody('fuzz-task-1'), ms)) },
    );
    const ifMatch = fc.oneof(
      currentIfMatch.map((value) => ({ value, current: true })),
      staleIfMatch.map((value) => ({ value, current: false })),
      garbageIfMatch.map((value) => ({ value, current: false })),
      fc.constant({ value: undefined, current: false }),
    );
    const req = fc
      .record({
        patch,
        pick: fc.nat(),
        ifMatch,
        target: fc.constantFrom('active', 'finalized', 'unknown'),
        contentType: fc.constantFrom('application/merge-patch+json', 'application/json', 'application/merge-patch+json; charset=utf-8'),
        key: fc.option(fc.oneof(validIdempotencyKey, garbageIdempotencyKey), { nil: undefined }),
      })
      .map(({ patch, pick, ifMatch, target, contentType, key }): Req => {
        // Against the current version, only a patch that must fail is sent: an object patch gets a change that makes it invalid.
        const body = ifMatch.current && target === 'active' && isObject(patch) && !hasLoneSurrogate(patch) ? PATCH_INVALIDATORS[pick % PATCH_INVALIDATORS.length]!(patch) : patch;
        const id = target === 'active' ? ids.active : target === 'finalized' ? ids.finalized : '00000000-0000-7000-8000-000000000001';
        return {
          method: 'PATCH',
          url: `/v1/checkpoints/${id}`,
          headers: {
            ...auth(),
            'content-type': contentType,
            ...(ifMatch.value === undefined ? {} : { 'if-match': ifMatch.value }),
            ...(key === undefined ? {} : { 'idempotency-key': key }),
          },
          payload: JSON.stringify(body),
          mustReject: true,
        };
      });
    await unchanged(() => fuzz(req, 200));
  });

  it('PATCH with random bytes as the body', async () => {
    const req = fc
      .record({ bytes: fc.uint8Array({ maxLength: 120 }), ifMatch: fc.constantFrom('"1"', '"5"', 'garbage') })
      .map(({ bytes, ifMatch }): Req => {
        // Bytes that parse as a JSON object could be a valid patch: send those against a stale version.
        let object = false;
        try {
          object = isObject(JSON.parse(Buffer.from(bytes).toString('utf8').replace(/^\ufeff/, '')));
        } catch {
          object = false;
        }
        return {
          method: 'PATCH',
          url: `/v1/checkpoints/${ids.active}`,
          headers: { ...auth(), ...MERGE_PATCH, 'if-match': object && ifMatch === '"1"' ? '"5"' : ifMatch },
          payload: Buffer.from(bytes),
          mustReject: true,
        };
      });
    await unchanged(() => fuzz(req, 60));
  });

  it('POST finalize and links with generated bodies', async () => {
    const req = fc
      .record({
        route: fc.constantFrom('finalize', 'links'),
        body: fc.oneof(
          anyJson,
          fc.record({ status: fc.oneof(fc.constantFrom('completed', 'failed', 'handoff', 'abandoned'), anyJson), signature: fc.oneof(fc.record({ meaning: anyJson }), anyJson) }, { requiredKeys: [] }),
          fc.record({ childId: fc.oneof(fc.uuid(), anyJson, fc.constantFrom(ids.child, ids.active, ids.parent)) }, { requiredKeys: [] }),
        ),
        target: fc.constantFrom('active', 'parent', 'finalized', 'unknown'),
        key: fc.option(fc.oneof(validIdempotencyKey, garbageIdempotencyKey), { nil: undefined }),
      })
      .map(({ route, body, target, key }): Req => {
        const schema = route === 'finalize' ? finalizeBody : linkBody;
        // A body the schema accepts could succeed: give it a member the (strict) schema refuses.
        const sent = isObject(body) && schema.safeParse(body).success ? { ...body, zzUnknownMember: 1 } : body;
        const id = target === 'active' ? ids.active : target === 'parent' ? ids.parent : target === 'finalized' ? ids.finalized : '00000000-0000-7000-8000-000000000002';
        return {
          method: 'POST',
          url: `/v1/checkpoints/${id}/${route}`,
          headers: { ...auth(), ...JSON_TYPE, ...(key === undefined ? {} : { 'idempotency-key': key }) },
          payload: JSON.stringify(sent),
          mustReject: true,
        };
      });
    await unchanged(() => fuzz(req, 120));
  });
});
