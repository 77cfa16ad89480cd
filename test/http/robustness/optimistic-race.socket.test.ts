/**
 * Optimistic locking over a real socket (DESIGN §3: PATCH with a stale
 * If-Match is 412): twenty concurrent PATCHes name version 1, exactly one
 * wins and the others are refused, and the checkpoint ends at version 2.
 */
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../../src/errors.js';
import { checkpointBody } from '../../support/app.js';
import { useBatonProcess, WRITER } from '../../support/crash-server.js';

const CONCURRENT = 20;

describe('concurrent PATCHes with the same If-Match, over a real socket', () => {
  const server = useBatonProcess('baton-race-');

  it('exactly one of twenty wins; nineteen get 412; the checkpoint is at version 2', { timeout: 60_000 }, async () => {
    const created = await fetch(`${server()}/v1/checkpoints`, {
      method: 'POST',
      headers: { ...WRITER, 'content-type': 'application/json' },
      body: JSON.stringify(checkpointBody('race-task')),
      signal: AbortSignal.timeout(10_000),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBe('"1"');
    const { id, compliance: { hash: createdHash } } = (await created.json()) as { id: string; compliance: { hash: string } };

    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, async (_, i) => {
        const res = await fetch(`${server()}/v1/checkpoints/${id}`, {
          method: 'PATCH',
          headers: { ...WRITER, 'content-type': 'application/merge-patch+json', 'if-match': '"1"' },
          body: JSON.stringify({ agentId: `racer-${i}`, labels: { racer: i } }),
          signal: AbortSignal.timeout(20_000),
        });
        return { i, status: res.status, etag: res.headers.get('etag'), type: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
      }),
    );

    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200), `statuses: ${statuses.join(',')}`).toHaveLength(1);
    expect(statuses.filter((s) => s === 412), `statuses: ${statuses.join(',')}`).toHaveLength(CONCURRENT - 1);

    const winner = answers.find((a) => a.status === 200)!;
    expect(winner.etag).toBe('"2"');
    expect(winner.body).toMatchObject({ id, version: 2, agentId: `racer-${winner.i}` });
    for (const loser of answers.filter((a) => a.status === 412)) {
      expect(loser.type).toMatch(/^application\/problem\+json/);
      expect(loser.body).toMatchObject({ status: 412, code: 'version_conflict' });
      expect(loser.body.detail).toEqual(expect.stringContaining(ERRORS.version_conflict.message));
    }

    const read = await fetch(`${server()}/v1/checkpoints/${id}`, { headers: WRITER, signal: AbortSignal.timeout(10_000) });
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe('"2"');
    const current = (await read.json()) as { version: number; agentId: string; labels: Record<string, unknown>; compliance: { hash: string } };
    expect(current.version).toBe(2);
    // The stored content is the winner's, whole: no mix of two patches.
    expect(current.agentId).toBe(`racer-${winner.i}`);
    expect(current.labels).toEqual({ team: 'core', racer: winner.i });
    expect(current.compliance.hash).toBe((winner.body.compliance as { hash: string }).hash);

    // One update reached the revisions, the audit trail and the event feed; the chain verifies.
    const revisions = (await (await fetch(`${server()}/v1/checkpoints/${id}/revisions`, { headers: WRITER })).json()) as { items: { version: number; hash: string }[] };
    expect(revisions.items.map((r) => [r.version, r.hash])).toEqual([
      [1, createdHash],
      [2, current.compliance.hash],
    ]);
    const verify = (await (await fetch(`${server()}/v1/tasks/race-task/audit/verify`, { headers: WRITER })).json()) as { ok: boolean; entries: number };
    expect(verify).toEqual({ ok: true, entries: 2 });
    const events = (await (await fetch(`${server()}/v1/events?types=CHECKPOINT_UPDATED`, { headers: WRITER })).json()) as { items: { subject: string }[] };
    expect(events.items.filter((e) => e.subject === id)).toHaveLength(1);
  });
});
