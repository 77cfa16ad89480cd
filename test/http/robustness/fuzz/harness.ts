/** Shared harness for the bad-input fuzz tests: one app with fixed fixtures, the checks every answer must pass, and the generators that more than one test file uses. */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, expect } from 'vitest';
import * as tuple from 'fdb-tuple';
import { mergePending } from '../../../support/insert.js';
import { ERRORS } from '../../../../src/errors.js';
import { auth, buildTestApp, checkpointBody, TOKENS, type TestApp } from '../../../support/app.js';

/*
 * DESIGN §3: "No input yields a 5xx or a stack trace". Each test file calls
 * `useFixtures()` inside its describe block: one app, a few checkpoints, then
 * hundreds of malformed requests through `inject`.
 *
 * Every answer must be below 500; a 4xx must be an RFC 9457 problem with a
 * code from the error table and a detail; no answer may carry a stack trace.
 * Every request sent here must be refused (bodies that might be valid are
 * made invalid on purpose), so the store must hold exactly the same bytes
 * afterwards: each test compares a hash of the whole keyspace before and
 * after itself.
 */

// ---------------------------------------------------------------------------
// Requests and the checks every answer must pass.
// ---------------------------------------------------------------------------

type Method = 'GET' | 'POST' | 'PATCH';

export interface Req {
  method: Method;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
  /** The request is bad input and must be refused (status ≥ 400). GETs of odd queries may also answer 2xx. */
  mustReject: boolean;
}

export const JSON_TYPE = { 'content-type': 'application/json' };
export const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };
export const STACK = /\n\s+at /;

/** The app of the current test file (a live binding: set by `useFixtures`). */
export let t: TestApp;
export const ids = { active: '', patched: '', finalized: '', parent: '', child: '', utf8: '' };

/** Builds the app and its fixtures before the tests of the enclosing describe block, and closes it after them. */
export function useFixtures(): void {
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
    // Each file ends by checking that the bad input it sent left the fixtures as they were.
    await expectFixturesIntact();
    await t?.close();
  });
}

/**
 * Every key and value of the tenants' data (`("baton", tenant, …)`), once the
 * indexer has merged what the fixtures left pending. The system space
 * (`"baton-system"`: the instance's entry, the indexer's duty lease, the
 * marks of tenants with pending words) is the background's own bookkeeping.
 */
async function snapshot(): Promise<string> {
  await mergePending(t.store, 'default');
  // `("baton", …)` packs as 0x02 "baton" 0x00 …: every tenant's keys lie before 0x02 "baton" 0x01.
  const begin = Buffer.from(tuple.pack(['baton']));
  const end = Buffer.concat([begin.subarray(0, begin.length - 1), Buffer.from([0x01])]);
  const rows = await t.store.transact((tx) => tx.getRange(begin, end));
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
export async function checkAll(reqs: Req[]): Promise<void> {
  const problems: string[] = [];
  for (const req of reqs) problems.push(...(await check(req)));
  expect(problems).toEqual([]);
}

/** A fast-check run of generated requests; a failure is shrunk to the smallest request that shows it. */
export async function fuzz(arbitrary: fc.Arbitrary<Req>, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arbitrary, async (req) => {
      expect(await check(req)).toEqual([]);
    }),
    { numRuns, endOnFailure: false, interruptAfterTimeLimit: 20_000 },
  );
}

/** Asserts that the keyspace holds the same bytes after `body` as before (and still reports `body`'s own failure first). */
export async function unchanged(body: () => Promise<void>): Promise<void> {
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
// Generators used by more than one test file.
// ---------------------------------------------------------------------------

const IF_MATCH = /^(?:W\/)?"?(\d{1,15})"?$/;
/** If-Match values that do not name version 1 and are not `*`: refused (400, 412 or 428). */
export const garbageIfMatch = fc
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
export const garbageIdempotencyKey = fc.oneof(
  fc.constant(''),
  fc.constant('k'.repeat(300)),
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 256, maxLength: 400 }),
  fc.tuple(printableAscii, fc.constantFrom(' ', '\t', 'é', 'ÿ', '\u0080', '\u00a0'), printableAscii).map(([a, b, c]) => `${a}${b}${c}`),
);
export const validIdempotencyKey = fc.stringMatching(/^[A-Za-z0-9._~-]{1,40}$/).map((key) => `fuzz-${key}`);

export function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** The fixtures read back unchanged, every chain verifies, and nothing leaked onto Object.prototype. */
export async function expectFixturesIntact(): Promise<void> {
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
}
