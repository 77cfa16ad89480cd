/** Bad input in headers: garbage Authorization, Content-Type, Idempotency-Key, If-Match and lease-epoch values on otherwise valid writes, all refused without a 5xx or a state change. */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { auth, checkpointBody, TOKENS } from '../../../support/app.js';
import { fuzz, garbageIdempotencyKey, garbageIfMatch, ids, JSON_TYPE, MERGE_PATCH, type Req, unchanged, useFixtures, validIdempotencyKey } from './harness.js';

/** Header-safe text (what Node's HTTP layer accepts in a header value), possibly non-ASCII. */
const headerText = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
  ),
  maxLength: 60,
});

describe('bad input: no 5xx, RFC 9457 problems, no stack traces, no state change', () => {
  useFixtures();

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
});
