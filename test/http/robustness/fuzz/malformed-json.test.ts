/** Malformed JSON bodies (10,000-level nesting, huge numbers, lone surrogates, duplicate keys, __proto__ and constructor members, invalid UTF-8) are refused without a 5xx, and the fixtures read back unchanged afterwards. */
import { describe, it } from 'vitest';
import { auth } from '../../../support/app.js';
import { checkAll, expectFixturesIntact, ids, JSON_TYPE, MERGE_PATCH, nested, type Req, unchanged, useFixtures } from './harness.js';

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

describe('bad input: no 5xx, RFC 9457 problems, no stack traces, no state change', () => {
  useFixtures();

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

  it('reads are still correct after the run: the fixtures are unchanged', expectFixturesIntact);
});
