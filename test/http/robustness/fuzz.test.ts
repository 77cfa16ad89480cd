/**
 * Bad input, generated (DESIGN §3: "No input yields a 5xx or a stack trace").
 *
 * One app, a few checkpoints, then hundreds of malformed requests through
 * `inject`: random JSON and random bytes as bodies, random ids, query
 * strings and header values, invalid UTF-8, 10,000-level nesting, huge
 * numbers, duplicate keys, `__proto__` and `constructor` members.
 *
 * Every answer must be below 500; a 4xx must be an RFC 9457 problem with a
 * code from the error table and a detail; no answer may carry a stack trace.
 * Every request sent here must be refused (bodies that might be valid are
 * made invalid on purpose), so the store must hold exactly the same bytes
 * afterwards: each test compares a hash of the whole keyspace before and
 * after itself.
 *
 * A second block, on an app of its own, sends inputs the schema allows but
 * that sit at its edges (deep nesting inside `extensions`, a 3,000-character
 * file path): these may be stored, but must never yield a 5xx.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointInput } from '../../../src/domain/checkpoint.js';
import { ERRORS } from '../../../src/errors.js';
import { finalizeBody, linkBody } from '../../../src/http/schemas.js';
import { auth, buildTestApp, checkpointBody, TOKENS, type TestApp } from '../../support/app.js';

// ---------------------------------------------------------------------------
// Requests and the checks every answer must pass.
// ---------------------------------------------------------------------------

type Method = 'GET' | 'POST' | 'PATCH';

interface Req {
  method: Method;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
  /** The request is bad input and must be refused (status ≥ 400). GETs of odd queries may also answer 2xx. */
  mustReject: boolean;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };
const STACK = /\n\s+at /;

let t: TestApp;
const ids = { active: '', patched: '', finalized: '', parent: '', child: '', utf8: '' };

/** Everything the store holds, hashed: keys and values of the whole keyspace. */
async function snapshot(): Promise<string> {
  const rows = await t.store.transact((tx) => tx.getRange(Buffer.from([0x00]), Buffer.from([0xff])));
  const hash = createHash('sha256');
  for (const { key, value } of rows) {
    const lengths = Buffer.alloc(8);
    lengths.writeUInt32BE(key.length, 0);
    lengths.writeUInt32BE(value.length, 4);
    hash.update(lengths).update(key).update(value);
  }
  return `${rows.length} keys, sha256 ${hash.digest('hex')}`;
}

/** A body as text; bytes that are not UTF-8 are shown as \xNN. */
function printable(payload: string | Buffer): string {
  if (typeof payload === 'string') return payload;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(payload);
  } catch {
    return [...payload.subarray(0, 400)].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('');
  }
}

function describeReq(req: Req): string {
  const payload = req.payload === undefined ? '' : ` body(${req.payload.length}): ${printable(req.payload).slice(0, 160)}`;
  const headers = Object.entries(req.headers ?? {})
    .filter(([name]) => name !== 'authorization' || !Object.values(TOKENS).some((token) => req.headers?.[name] === `Bearer ${token}`))
    .map(([name, value]) => `${name}: ${JSON.stringify(value.slice(0, 80))}`)
    .join('; ');
  return `${req.method} ${req.url.slice(0, 200)}${headers ? ` [${headers}]` : ''}${payload}`;
}

/** Sends one request and lists what is wrong with its answer (empty when nothing is). */
async function check(req: Req): Promise<string[]> {
  const res = await t.app.inject({ method: req.method, url: req.url, headers: req.headers ?? {}, ...(req.payload === undefined ? {} : { payload: req.payload }) });
  const problems: string[] = [];
  const status = res.statusCode;
  const body = res.body;
  const what = `${describeReq(req)} → ${status} ${body.slice(0, 300)}`;
  if (status >= 500) problems.push(`5xx: ${what}`);
  if (req.mustReject && status < 400) problems.push(`bad input accepted: ${what}`);
  if (STACK.test(body) || body.includes('node_modules')) problems.push(`stack trace in body: ${what}`);
  if (status >= 400 && status < 500) {
    const type = String(res.headers['content-type'] ?? '');
    if (!type.startsWith('application/problem+json')) problems.push(`4xx is not application/problem+json (${type}): ${what}`);
    let problem: Record<string, unknown> | undefined;
    try {
      problem = JSON.parse(body) as Record<string, unknown>;
    } catch {
      problems.push(`4xx body is not JSON: ${what}`);
    }
    if (problem) {
      if (typeof problem.code !== 'string' || !Object.hasOwn(ERRORS, problem.code)) problems.push(`4xx code not in ERRORS: ${what}`);
      if (typeof problem.detail !== 'string' || problem.detail.trim() === '') problems.push(`4xx without a detail: ${what}`);
      if (problem.status !== status) problems.push(`problem.status ${String(problem.status)} differs from the HTTP status: ${what}`);
    }
  }
  return problems;
}

/** Runs a list of requests and fails once, naming every bad answer. */
async function checkAll(reqs: Req[]): Promise<void> {
  const problems: string[] = [];
  for (const req of reqs) problems.push(...(await check(req)));
  expect(problems).toEqual([]);
}

/** A fast-check run of generated requests; a failure is shrunk to the smallest request that shows it. */
async function fuzz(arbitrary: fc.Arbitrary<Req>, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arbitrary, async (req) => {
      expect(await check(req)).toEqual([]);
    }),
    { numRuns, endOnFailure: false, interruptAfterTimeLimit: 20_000 },
  );
}

/** Asserts that the keyspace holds the same bytes after `body` as before (and still reports `body`'s own failure first). */
async function unchanged(body: () => Promise<void>): Promise<void> {
  const before = await snapshot();
  let failure: unknown;
  try {
    await body();
  } catch (error) {
    failure = error;
  }
  const after = await snapshot();
  if (failure !== undefined) {
    if (after !== before && failure instanceof Error) failure.message += `\n\nThe store changed too: ${before} → ${after}.`;
    throw failure;
  }
  expect(after, 'the store changed').toBe(before);
}

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
const IF_MATCH = /^(?:W\/)?"?(\d{1,15})"?$/;
/** If-Match values that do not name version 1 and are not `*`: refused (400, 412 or 428). */
const garbageIfMatch = fc
  .oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom('', ' ', '"', '""', '"abc"', 'W/', 'W/""', '"1", "2"', '1.0', '-1', '0x1', '"1"x', '*x', '**', 'null', '"9999999999999999"', '"1'.repeat(50)),
  )
  .filter((value) => {
    const trimmed = value.trim();
    if (trimmed === '*') return false;
    const match = IF_MATCH.exec(trimmed);
    return !(match && Number(match[1]) === 1);
  });

const printableAscii = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 20 });
/** Idempotency-Key values outside 1–255 visible ASCII characters. */
const garbageIdempotencyKey = fc.oneof(
  fc.constant(''),
  fc.constant('k'.repeat(300)),
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 256, maxLength: 400 }),
  fc.tuple(printableAscii, fc.constantFrom(' ', '\t', 'é', 'ÿ', '\u0080', '\u00a0'), printableAscii).map(([a, b, c]) => `${a}${b}${c}`),
);
const validIdempotencyKey = fc.stringMatching(/^[A-Za-z0-9._~-]{1,40}$/).map((key) => `fuzz-${key}`);

/** Header-safe text (what Node's HTTP layer accepts in a header value), possibly non-ASCII. */
const headerText = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
  ),
  maxLength: 60,
});

/** Percent-encodes the UTF-8 bytes of any string (a lone surrogate becomes U+FFFD's bytes). */
function pct(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** Path segments: odd ids, traversal, raw percent escapes (valid and not), very long, unicode, empty. */
const oddSegment = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }).map(pct),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map(pct),
  fc.uuid().map((u) => u),
  fc.constantFrom(
    '',
    '..%2f',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e',
    '..',
    '.',
    '%',
    '%zz',
    '%E2%82',
    '%C0%AF',
    '%ED%A0%80',
    '%FF%FE',
    '%00',
    '%0A',
    '%20',
    '%E2%82%AC',
    '%F0%9F%98%80',
    'a'.repeat(300),
    'a'.repeat(5000),
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '{id}',
    ':id',
    '*',
    'null',
    'undefined',
    '__proto__',
    'constructor',
  ),
);

function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** Bytes that are not UTF-8: stray continuation bytes, overlong forms, UTF-16 surrogates, truncated sequences, 0xFE/0xFF. */
const INVALID_UTF8: Buffer[] = [
  Buffer.from([0xff]),
  Buffer.from([0xfe, 0xff]),
  Buffer.from([0x80]),
  Buffer.from([0xbf, 0xbf]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xc1, 0xbf]),
  Buffer.from([0xe0, 0x80, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xed, 0xbf, 0xbf]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xc3]),
];

function withBytes(prefix: string, bytes: Buffer, suffix: string): Buffer {
  return Buffer.concat([Buffer.from(prefix, 'utf8'), bytes, Buffer.from(suffix, 'utf8')]);
}

// ---------------------------------------------------------------------------
// The run.
// ---------------------------------------------------------------------------

describe('bad input: no 5xx, RFC 9457 problems, no stack traces, no state change', () => {
  beforeAll(async () => {
    t = await buildTestApp();
    const create = async (taskId: string, extra: Record<string, unknown> = {}): Promise<string> => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, extra) });
      expect(res.statusCode).toBe(201);
      return (res.json() as { id: string }).id;
    };
    ids.active = await create('fuzz-task-1');
    ids.patched = await create('fuzz-task-1');
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/v1/checkpoints/${ids.patched}`,
      headers: { ...auth(), ...MERGE_PATCH, 'if-match': '"1"' },
      payload: JSON.stringify({ executionState: { phase: 'testing' } }),
    });
    expect(patched.statusCode).toBe(200);
    ids.finalized = await create('fuzz-task-2');
    const finalized = await t.app.inject({
      method: 'POST',
      url: `/v1/checkpoints/${ids.finalized}/finalize`,
      headers: { ...auth(), ...JSON_TYPE },
      payload: JSON.stringify({ status: 'completed' }),
    });
    expect(finalized.statusCode).toBe(200);
    ids.parent = await create('fuzz-task-3');
    ids.child = await create('fuzz-task-3', { parentId: ids.parent });
    ids.utf8 = await create('fuzz-task-4');
  });

  afterAll(async () => {
    await t?.close();
  });

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

  it('odd ids in every path, for reads and for writes with valid bodies', async () => {
    const reads = fc.record({ segment: oddSegment, route: fc.constantFrom('', '/lineage', '/revisions', '?version=1') }).map(
      ({ segment, route }): Req => ({ method: 'GET', url: `/v1/checkpoints/${segment}${route}`, headers: auth(), mustReject: false }),
    );
    const taskReads = fc.record({ segment: oddSegment, route: fc.constantFrom('/checkpoints', '/checkpoints/latest', '/audit', '/audit/verify') }).map(
      ({ segment, route }): Req => ({ method: 'GET', url: `/v1/tasks/${segment}${route}`, headers: auth(), mustReject: false }),
    );
    const writes = fc.record({ segment: oddSegment, route: fc.constantFrom('patch', 'finalize', 'links') }).map(({ segment, route }): Req => {
      if (route === 'patch') {
        return {
          method: 'PATCH',
          url: `/v1/checkpoints/${segment}`,
          headers: { ...auth(), ...MERGE_PATCH, 'if-match': '"1"' },
          payload: JSON.stringify({ executionState: { phase: 'testing' } }),
          mustReject: true,
        };
      }
      const payload = route === 'finalize' ? { status: 'completed' } : { childId: ids.active };
      return { method: 'POST', url: `/v1/checkpoints/${segment}/${route}`, headers: { ...auth(), ...JSON_TYPE }, payload: JSON.stringify(payload), mustReject: true };
    });
    await unchanged(() => fuzz(fc.oneof(reads, taskReads, writes), 250));
  });

  it('random query strings on search, history, audit, events and versions', async () => {
    const key = fc.oneof(
      fc.constantFrom('limit', 'cursor', 'after', 'types', 'from', 'to', 'q', 'taskId', 'agentId', 'agentType', 'phase', 'status', 'finalStatus', 'file', 'label.team', 'label.', 'label', 'version'),
      fc.string({ maxLength: 10 }).map(pct),
    );
    const value = fc.oneof(
      fc.constantFrom(
        '-1',
        'abc',
        '0',
        '1001',
        '1e3',
        '1.5',
        '',
        'garbage',
        'notadate',
        '2020-13-45T00:00:00Z',
        '2024-01-01',
        '9999999999999999999999',
        'NaN',
        'Infinity',
        '%FF',
        '%',
        '%zz',
        'eyJzIjoiYSJ9',
        'ffffffffffffffffffffffff',
        'FFFFFFFFFFFFFFFFFFFFFFFF',
        'CHECKPOINT_CREATED,NOPE',
        ',,,',
        'A'.repeat(3000),
        '%00',
      ),
      fc.string({ unit: 'binary', maxLength: 30 }).map(pct),
    );
    const query = fc.array(fc.tuple(key, value), { minLength: 1, maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
    const path = fc.constantFrom('/v1/checkpoints', '/v1/tasks/fuzz-task-1/checkpoints', '/v1/tasks/fuzz-task-1/audit', '/v1/events', `/v1/checkpoints/${ids.patched}`);
    const req = fc.record({ path, query }).map(({ path, query }): Req => ({ method: 'GET', url: `${path}?${query}`, headers: auth(), mustReject: false }));
    await unchanged(async () => {
      await fuzz(req, 250);
      await checkAll(
        ['limit=-1', 'limit=abc', 'limit=0', 'limit=1001', 'cursor=garbage', 'cursor=%FF', 'cursor=eyJzIjoiYSJ9', 'from=notadate', 'to=2020-13-45T00:00:00Z', 'limit=1&limit=2'].flatMap((q) => [
          { method: 'GET' as const, url: `/v1/checkpoints?${q}`, headers: auth(), mustReject: true },
          ...(q.startsWith('from') || q.startsWith('to')
            ? []
            : [
                { method: 'GET' as const, url: `/v1/tasks/fuzz-task-1/checkpoints?${q}`, headers: auth(), mustReject: true },
                { method: 'GET' as const, url: `/v1/tasks/fuzz-task-1/audit?${q}`, headers: auth(), mustReject: true },
              ]),
        ]),
      );
      // Filter values as long as the schema allows (file: 4,096), or longer (label values): an empty page or a 400, never a 5xx.
      await checkAll(
        [`file=${'A'.repeat(3000)}`, `file=${'%E2%82%AC'.repeat(1300)}`, `label.team=${'v'.repeat(3000)}`, `taskId=${'%F0%9F%98%80'.repeat(200)}`, `q=${'q'.repeat(500)}`].map((q) => ({
          method: 'GET' as const,
          url: `/v1/checkpoints?${q}`,
          headers: auth(),
          mustReject: false,
        })),
      );
      await checkAll(
        ['after=garbage', 'after=FFFFFFFFFFFFFFFFFFFFFFFF', 'limit=-1', 'limit=abc', 'types=NOPE', `after=${'a'.repeat(200)}`].map((q) => ({
          method: 'GET' as const,
          url: `/v1/events?${q}`,
          headers: auth(),
          mustReject: true,
        })),
      );
      await checkAll(
        ['garbage', 'FFFFFFFFFFFFFFFFFFFFFFFF', 'x'.repeat(500), '-1'].map((id) => ({
          method: 'GET' as const,
          url: '/v1/events',
          headers: { ...auth(), 'last-event-id': id },
          mustReject: true,
        })),
      );
    });
  });

  it('garbage header values on writes with otherwise valid requests', async () => {
    const validCreate = JSON.stringify(checkpointBody('fuzz-task-headers'));
    const validPatch = JSON.stringify({ executionState: { phase: 'testing' } });
    const tokens = Object.values(TOKENS);
    const authorization = fc
      .oneof(
        headerText,
        headerText.map((s) => `Bearer ${s}`),
        fc.constantFrom('', 'Bearer', 'Bearer ', 'Bearer  ', `Basic ${Buffer.from('writer:x').toString('base64')}`, `Bearer ${TOKENS.writer}x`, `Bearer x${TOKENS.writer}`, `Bearer ${TOKENS.writer} extra`, `Token ${TOKENS.writer}`, `Bearer ${'a'.repeat(10_000)}`, `Bearer\t${TOKENS.writer}`, `${TOKENS.writer}`),
      )
      // A value that carries a real token after "Bearer " is a valid request, not garbage.
      .filter((value) => !tokens.some((token) => new RegExp(`^Bearer +${token} *$`, 'i').test(value)));
    const nonJsonType = fc.constantFrom(
      'text/plain',
      'application/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      'text/json',
      'application/jsonx',
      'application/json-patch+json',
      'application/problem+json',
      '*/*',
      'application/*',
      'application/',
      '/',
      '',
      'application/json, text/plain',
      'text/plain; application/json',
    );
    const epoch = headerText.filter((value) => !/^\d{1,15}$/.test(value.trim()));
    const req = fc.oneof(
      fc.record({ value: authorization, patch: fc.boolean() }).map(
        ({ value, patch }): Req =>
          patch
            ? { method: 'PATCH', url: `/v1/checkpoints/${ids.active}`, headers: { authorization: value, ...MERGE_PATCH, 'if-match': '"1"' }, payload: validPatch, mustReject: true }
            : { method: 'POST', url: '/v1/checkpoints', headers: { authorization: value, ...JSON_TYPE }, payload: validCreate, mustReject: true },
      ),
      fc.constantFrom<Req>(
        { method: 'POST', url: '/v1/checkpoints', headers: { ...auth('auditor'), ...JSON_TYPE }, payload: validCreate, mustReject: true },
        { method: 'PATCH', url: `/v1/checkpoints/${ids.active}`, headers: { ...auth('auditor'), ...MERGE_PATCH, 'if-match': '"1"' }, payload: validPatch, mustReject: true },
        // Another tenant's writer cannot see this tenant's checkpoint.
        { method: 'PATCH', url: `/v1/checkpoints/${ids.active}`, headers: { ...auth('acmeWriter'), ...MERGE_PATCH, 'if-match': '"1"' }, payload: validPatch, mustReject: true },
        { method: 'POST', url: `/v1/checkpoints/${ids.active}/finalize`, headers: { ...auth('acmeWriter'), ...JSON_TYPE }, payload: '{"status":"completed"}', mustReject: true },
      ),
      fc.record({ type: nonJsonType, patch: fc.boolean() }).map(
        ({ type, patch }): Req =>
          patch
            ? { method: 'PATCH', url: `/v1/checkpoints/${ids.active}`, headers: { ...auth(), 'content-type': type, 'if-match': '"1"' }, payload: validPatch, mustReject: true }
            : { method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), 'content-type': type }, payload: validCreate, mustReject: true },
      ),
      fc.record({ key: garbageIdempotencyKey, patch: fc.boolean() }).map(
        ({ key, patch }): Req =>
          patch
            ? { method: 'PATCH', url: `/v1/checkpoints/${ids.active}`, headers: { ...auth(), ...MERGE_PATCH, 'if-match': '"1"', 'idempotency-key': key }, payload: validPatch, mustReject: true }
            : { method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE, 'idempotency-key': key }, payload: validCreate, mustReject: true },
      ),
      fc.record({ value: garbageIfMatch, key: fc.option(validIdempotencyKey, { nil: undefined }) }).map(
        ({ value, key }): Req => ({
          method: 'PATCH',
          url: `/v1/checkpoints/${ids.active}`,
          headers: { ...auth(), ...MERGE_PATCH, 'if-match': value, ...(key === undefined ? {} : { 'idempotency-key': key }) },
          payload: validPatch,
          mustReject: true,
        }),
      ),
      epoch.map((value): Req => ({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE, 'baton-lease-epoch': value }, payload: validCreate, mustReject: true })),
    );
    await unchanged(() => fuzz(req, 250));
  });

  it('deeply nested JSON (10,000 levels) is refused without a 5xx', async () => {
    const deepArray = nested(10_000, 'array');
    const deepObject = nested(10_000, 'object');
    const reqs: Req[] = [];
    for (const deep of [deepArray, deepObject]) {
      reqs.push(
        { method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE }, payload: deep, mustReject: true },
        { method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE }, payload: `{"taskId":${deep},"agentId":"a"}`, mustReject: true },
        { method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE, 'idempotency-key': 'fuzz-deep-1' }, payload: `{"taskId":"t","agentId":"a","zz":${deep}}`, mustReject: true },
        // Merge patches that must fail validation (a nested value where a phase name belongs).
        { method: 'PATCH', url: `/v1/checkpoints/${ids.active}`, headers: { ...auth(), ...MERGE_PATCH, 'if-match': '"1"' }, payload: `{"executionState":{"phase":${deep}}}`, mustReject: true },
        { method: 'PATCH', url: `/v1/checkpoints/${ids.active}`, headers: { ...auth(), ...MERGE_PATCH, 'if-match': '"1"' }, payload: deep, mustReject: true },
        // A stale version with an Idempotency-Key: refused with 412 whatever the body holds.
        { method: 'PATCH', url: `/v1/checkpoints/${ids.active}`, headers: { ...auth(), ...MERGE_PATCH, 'if-match': '"7"', 'idempotency-key': 'fuzz-deep-2' }, payload: `{"extensions":${deep}}`, mustReject: true },
        { method: 'PATCH', url: `/v1/checkpoints/${ids.finalized}`, headers: { ...auth(), ...MERGE_PATCH, 'if-match': '"2"' }, payload: `{"extensions":${deep}}`, mustReject: true },
        { method: 'POST', url: `/v1/checkpoints/${ids.active}/finalize`, headers: { ...auth(), ...JSON_TYPE, 'idempotency-key': 'fuzz-deep-3' }, payload: `{"status":${deep}}`, mustReject: true },
        { method: 'POST', url: `/v1/checkpoints/${ids.active}/links`, headers: { ...auth(), ...JSON_TYPE }, payload: `{"childId":${deep}}`, mustReject: true },
      );
    }
    await unchanged(() => checkAll(reqs));
  });

  it('huge numbers, lone surrogates, duplicate keys, __proto__ and constructor members are refused without a 5xx', async () => {
    const post = (payload: string, headers: Record<string, string> = {}): Req => ({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE, ...headers }, payload, mustReject: true });
    const patch = (payload: string, ifMatch = '"1"', headers: Record<string, string> = {}): Req => ({
      method: 'PATCH',
      url: `/v1/checkpoints/${ids.active}`,
      headers: { ...auth(), ...MERGE_PATCH, 'if-match': ifMatch, ...headers },
      payload,
      mustReject: true,
    });
    const reqs: Req[] = [
      // Numbers JSON can write but a double cannot hold (they parse to ±Infinity), and integers beyond 2^53.
      post('{"taskId":"t","agentId":"a","iteration":1e400}'),
      post('{"taskId":"t","agentId":"a","iteration":123456789012345678901234567890}'),
      post('{"taskId":"t","agentId":"a","metrics":{"tokensConsumed":1e20}}'),
      post('{"taskId":"t","agentId":"a","metrics":{"contextUtilization":-1e400}}'),
      post('{"taskId":"t","agentId":"a","labels":{"n":1e400}}'),
      post('{"taskId":"t","agentId":"a","extensions":{"n":1e400}}'),
      post('{"taskId":"t","agentId":"a","extensions":{"n":-1e999}}'),
      post('{"taskId":"t","agentId":"a","executionState":{"extra":1e309}}'),
      patch('{"extensions":{"n":1e999}}'),
      patch('{"executionState":{"extra":-1e400}}'),
      patch('{"extensions":{"n":1e999}}', '"9"', { 'idempotency-key': 'fuzz-inf-1' }),
      // Lone surrogates: RFC 8785 cannot canonicalize them, so no hash can be computed; they must be refused.
      post('{"taskId":"\\ud800","agentId":"a"}'),
      post('{"taskId":"t","agentId":"a","extensions":{"s":"\\udc00"}}'),
      post('{"taskId":"t","agentId":"a","extensions":{"\\ud83d":1}}'),
      post('{"taskId":"t","agentId":"a","recovery":{"continuationPrompt":"a\\ud800b"}}'),
      patch('{"agentId":"\\ud800"}'),
      patch('{"extensions":{"s":"\\udfff"}}'),
      patch('{"agentId":"\\ud800"}', '"9"', { 'idempotency-key': 'fuzz-surrogate-1' }),
      post('{"taskId":"t","agentId":"a","iteration":-1,"extensions":{"s":"\\ud800"}}', { 'idempotency-key': 'fuzz-surrogate-2' }),
      // Duplicate keys, where every reading of them is invalid.
      post('{"taskId":"t","taskId":5,"agentId":"a"}'),
      post('{"taskId":5,"taskId":6,"agentId":"a"}'),
      post('{"taskId":"t","agentId":"a","agentId":""}'),
      patch('{"version":2,"version":3}'),
      patch('{"executionState":{"phase":"testing","phase":"bogus"}}'),
      // __proto__ and constructor.prototype, at the top and nested.
      post('{"taskId":"t","agentId":"a","__proto__":{"isAdmin":true}}'),
      post('{"__proto__":{"taskId":"t","agentId":"a"}}'),
      post('{"taskId":"t","agentId":"a","extensions":{"__proto__":{"polluted":true}}}'),
      post('{"taskId":"t","agentId":"a","labels":{"__proto__":"x"}}'),
      post('{"taskId":"t","agentId":"a","constructor":{"prototype":{"polluted":true}}}'),
      post('{"taskId":"t","agentId":"a","extensions":{"constructor":{"prototype":{"polluted":true}}}}'),
      post('{"taskId":"t","agentId":"a","constructor":{"x":1}}'),
      post('{"taskId":"t","agentId":"a","toString":"x","hasOwnProperty":1}'),
      patch('{"__proto__":{"agentId":"evil"}}'),
      patch('{"__proto__":{"version":99}}'),
      patch('{"extensions":{"__proto__":{"polluted":true}}}'),
      patch('{"constructor":{"prototype":{"polluted":true}}}'),
      patch('{"constructor":{"x":1}}'),
      patch('{"executionState":{"__proto__":null}}', '"1"', { 'idempotency-key': 'fuzz-proto-1' }),
      // Bodies that are not objects at all, or nothing.
      post(''),
      post(' '),
      post('null'),
      post('[]'),
      post('""'),
      post('0'),
      post('true'),
      post('{'),
      post('{"taskId":"t",}'),
      post("{'taskId':'t'}"),
      post('{"taskId":"t","agentId":"a"} trailing'),
      post('\ufeff{"taskId":"t","agentId":"a","iteration":-1}'),
      patch(''),
      patch('null'),
      patch('[]'),
      patch('"x"'),
      patch('42'),
      patch('{"a":1'),
      // Too large: a checkpoint over the 1 MiB limit (413), and a body over the body limit.
      post(JSON.stringify({ taskId: 't', agentId: 'a', extensions: { s: 'x'.repeat(1_100_000) } })),
      post(JSON.stringify({ taskId: 't', agentId: 'a', extensions: { s: 'x'.repeat(2_200_000) } })),
      patch(JSON.stringify({ extensions: { s: 'x'.repeat(1_100_000) } })),
    ];
    await unchanged(() => checkAll(reqs));
  });

  // Last of the refusals, on a checkpoint of its own: a request that wrongly succeeds here cannot disturb the others.
  it('invalid UTF-8 in bodies is refused, not silently replaced', async () => {
    const reqs: Req[] = INVALID_UTF8.flatMap((bytes): Req[] => [
      // Otherwise valid bodies: the invalid bytes sit inside a string value.
      { method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE }, payload: withBytes('{"taskId":"fuzz-utf8-', bytes, '","agentId":"a"}'), mustReject: true },
      { method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE }, payload: withBytes('{"taskId":"fuzz-utf8","agentId":"a","extensions":{"note":"', bytes, '"}}'), mustReject: true },
      {
        method: 'PATCH',
        url: `/v1/checkpoints/${ids.utf8}`,
        headers: { ...auth(), ...MERGE_PATCH, 'if-match': '"1"' },
        payload: withBytes('{"recovery":{"continuationPrompt":"', bytes, '"}}'),
        mustReject: true,
      },
      { method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE }, payload: withBytes('', bytes, ''), mustReject: true },
    ]);
    await unchanged(() => checkAll(reqs));
  });

  it('reads are still correct after the run: the fixtures are unchanged', async () => {
    const active = await t.app.inject({ method: 'GET', url: `/v1/checkpoints/${ids.active}`, headers: auth() });
    expect(active.statusCode).toBe(200);
    expect(active.headers.etag).toBe('"1"');
    const finalized = await t.app.inject({ method: 'GET', url: `/v1/checkpoints/${ids.finalized}`, headers: auth() });
    expect(finalized.json()).toMatchObject({ status: 'finalized', version: 2 });
    for (const task of ['fuzz-task-1', 'fuzz-task-2', 'fuzz-task-3']) {
      const verify = await t.app.inject({ method: 'GET', url: `/v1/tasks/${task}/audit/verify`, headers: auth() });
      expect(verify.json()).toMatchObject({ ok: true });
    }
    // Nothing leaked onto Object.prototype from a __proto__ or constructor member.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });
});

describe('inputs at the edge of what the schema allows (own app: these may be stored)', () => {
  let edge: TestApp;
  beforeAll(async () => {
    edge = await buildTestApp();
  });
  afterAll(async () => {
    await edge?.close();
  });

  const post = async (body: Record<string, unknown> | string): Promise<{ status: number; body: string; json: () => Record<string, unknown> }> => {
    const res = await edge.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: { ...auth(), ...JSON_TYPE }, payload: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.statusCode, body: res.body, json: () => res.json() as Record<string, unknown> };
  };

  it('a 10,000-level value inside extensions (schema: any JSON) is stored or refused with a problem, never a 5xx', async () => {
    for (const deep of [nested(10_000, 'array'), nested(10_000, 'object')]) {
      const res = await post(`{"taskId":"edge-deep","agentId":"a","extensions":{"deep":${deep}}}`);
      expect(res.status, res.body.slice(0, 300)).toBeLessThan(500);
      if (res.status >= 400) expect(res.json()).toMatchObject({ code: expect.stringMatching(/^(validation_failed|payload_too_large)$/) });
      expect(res.body).not.toMatch(STACK);
    }
  });

  it('a 3,000-character file path (schema: up to 4,096) is stored, or refused as invalid naming the field; not 413 for a 3 KB body', async () => {
    const path = `src/${'d/'.repeat(1498)}f.ts`;
    expect(path.length).toBeLessThanOrEqual(4096);
    const res = await post(checkpointBody('edge-file', { metrics: { filesModified: [path] } }));
    expect(res.status, res.body.slice(0, 300)).not.toBe(413);
    expect([201, 400], res.body.slice(0, 300)).toContain(res.status);
    if (res.status === 400) expect(JSON.stringify(res.json().errors)).toContain('filesModified');
  });

  it('a label value of 1,000 characters (the schema maximum) is stored and found by label search', async () => {
    const value = 'v'.repeat(1000);
    const res = await post(checkpointBody('edge-label', { labels: { long: value } }));
    expect(res.status, res.body.slice(0, 300)).toBe(201);
    const found = await edge.app.inject({ method: 'GET', url: `/v1/checkpoints?label.long=${value}`, headers: auth() });
    expect(found.statusCode).toBe(200);
    expect((found.json() as { items: { id: string }[] }).items.map((i) => i.id)).toEqual([res.json().id]);
  });
});
