/** Bad input in the request line: odd ids in every path and random query strings, answered without a 5xx or a state change. */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { auth } from '../../../support/app.js';
import { checkAll, fuzz, ids, JSON_TYPE, MERGE_PATCH, type Req, unchanged, useFixtures } from './harness.js';

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

describe('bad input: no 5xx, RFC 9457 problems, no stack traces, no state change', () => {
  useFixtures();

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
});
