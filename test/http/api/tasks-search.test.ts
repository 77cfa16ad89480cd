/**
 * A task's history and latest checkpoint, and search over checkpoints
 * (DESIGN §3): filters, AND, time ranges, full text and cursors.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { auth, checkpointBody, useClockedTestApp } from '../../support/app.js';

type Json = Record<string, unknown>;
type Page = { items: Json[]; nextCursor?: string };

const { app, clock } = useClockedTestApp('2025-03-01T10:00:00.000Z');

const minute = (n: number) => new Date(Date.UTC(2025, 2, 1, 10, n)).toISOString();

async function create(taskId: string, extra: Json = {}): Promise<Json> {
  const res = await app().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, extra) });
  expect(res.statusCode).toBe(201);
  clock.advance(60_000);
  return res.json() as Json;
}

async function list(url: string): Promise<Page> {
  const res = await app().app.inject({ method: 'GET', url, headers: auth() });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page;
}

/** Follows nextCursor to the end; returns the ids of every page. */
async function allPages(url: string): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const sep = url.includes('?') ? '&' : '?';
    const page = await list(cursor === undefined ? url : `${url}${sep}cursor=${encodeURIComponent(cursor)}`);
    pages.push(page.items.map((i) => String(i.id)));
    cursor = page.nextCursor;
    expect(pages.length).toBeLessThan(50);
  } while (cursor !== undefined);
  return pages;
}

const idsOf = (page: Page) => page.items.map((i) => i.id);

describe('GET /v1/tasks/:taskId/checkpoints and /latest', () => {
  it('lists history newest first and pages through every item exactly once', async () => {
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push(String((await create('task-hist')).id));
    await create('task-other');
    const newestFirst = [...made].reverse();
    expect(idsOf(await list('/v1/tasks/task-hist/checkpoints'))).toEqual(newestFirst);

    const pages = await allPages('/v1/tasks/task-hist/checkpoints?limit=3');
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(newestFirst);
  });

  it('omits nextCursor on the last page when the count is a multiple of the limit', async () => {
    for (let i = 0; i < 4; i++) await create('task-even');
    const first = await list('/v1/tasks/task-even/checkpoints?limit=2');
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await list(`/v1/tasks/task-even/checkpoints?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`);
    expect(second.items).toHaveLength(2);
    expect(second).not.toHaveProperty('nextCursor');
  });

  it('refuses a limit over 1000 and below 1, naming query.limit', async () => {
    await create('task-limit');
    for (const limit of ['1001', '0', 'ten']) {
      const res = await app().app.inject({ method: 'GET', url: `/v1/tasks/task-limit/checkpoints?limit=${limit}`, headers: auth() });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: expect.arrayContaining([expect.objectContaining({ field: 'query.limit' })]) });
    }
    expect((await list('/v1/tasks/task-limit/checkpoints?limit=1000')).items).toHaveLength(1);
  });

  it('refuses an invalid cursor with 400', async () => {
    await create('task-cursor');
    for (const cursor of ['garbage!', Buffer.from('{"x":1}').toString('base64url')]) {
      const res = await app().app.inject({ method: 'GET', url: `/v1/tasks/task-cursor/checkpoints?cursor=${cursor}`, headers: auth() });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_cursor' });
    }
  });

  it('returns the newest checkpoint as latest, with its ETag', async () => {
    await create('task-latest');
    const newest = await create('task-latest', { labels: { which: 'newest' } });
    const res = await app().app.inject({ method: 'GET', url: '/v1/tasks/task-latest/checkpoints/latest', headers: auth() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(newest);
    expect(res.headers.etag).toBe('"1"');
    expect(res.headers['baton-skipped-corrupt']).toBeUndefined();
  });

  it('answers 404 not_found for an unknown task', async () => {
    for (const url of ['/v1/tasks/nope/checkpoints', '/v1/tasks/nope/checkpoints/latest']) {
      const res = await app().app.inject({ method: 'GET', url, headers: auth() });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found' });
    }
  });
});

describe('GET /v1/checkpoints (search)', () => {
  let c: Json[];
  beforeEach(async () => {
    c = [];
    c.push(
      await create('task-a', {
        agentId: 'agent-1',
        labels: { team: 'core', priority: 3 },
        executionState: {
          phase: 'implementing',
          completedItems: ['alpha plan', { description: 'alpha work', files: { created: ['src/alpha.ts'] } }],
          pendingItems: [{ description: 'alpha review', files: { modified: [{ path: 'src/object-ref.ts', sha256: 'ab'.repeat(32) }, 'src/alpha.ts'] } }],
          blockedItems: [{ description: 'alpha cleanup', files: { deleted: ['src/blocked-gone.ts'] } }],
        },
        metrics: { filesModified: ['src/metrics-only.ts', { path: 'src/metrics-object.ts' }] },
        contextSummary: { keyDecisions: ['Use PostgreSQL for storage'] },
      }),
    );
    c.push(
      await create('task-a', {
        agentId: 'agent-2',
        agentType: 'review',
        labels: { team: 'web' },
        executionState: { phase: 'reviewing', pendingItems: [{ id: 'r1', description: 'Refactor the Widget Factory' }] },
        metrics: {},
        contextSummary: {},
      }),
    );
    c.push(await create('task-b', { agentId: 'agent-1', labels: {}, executionState: { phase: 'testing' }, metrics: {}, contextSummary: {} }));
    c.push(await create('task-b', { agentId: 'agent-3', agentType: 'planner', labels: {}, executionState: { phase: 'planning' }, metrics: {}, contextSummary: {} }));
    c.push(await create('task-c', { agentId: 'agent-1', labels: { team: 'core' }, executionState: { phase: 'implementing' }, metrics: {}, contextSummary: {} }));
    for (const [i, status] of [[2, 'completed'], [3, 'failed']] as const) {
      const res = await app().app.inject({ method: 'POST', url: `/v1/checkpoints/${String(c[i]!.id)}/finalize`, headers: auth(), payload: { status } });
      expect(res.statusCode).toBe(200);
    }
  });

  const expectIds = async (query: string, indexes: number[]) => {
    const page = await list(`/v1/checkpoints?${query}`);
    expect(idsOf(page), query).toEqual(indexes.map((i) => c[i]!.id));
  };

  it('filters by taskId, agentId, agentType, phase, status and finalStatus (newest first)', async () => {
    await expectIds('taskId=task-a', [1, 0]);
    await expectIds('agentId=agent-1', [4, 2, 0]);
    await expectIds('agentType=review', [1]);
    await expectIds('agentType=implementation', [4, 2, 0]);
    await expectIds('phase=testing', [2]);
    await expectIds('status=finalized', [3, 2]);
    await expectIds('status=active', [4, 1, 0]);
    await expectIds('finalStatus=failed', [3]);
    await expectIds('finalStatus=completed', [2]);
    await expectIds('taskId=nothing-here', []);
  });

  it('filters by label.K=V, including number labels', async () => {
    await expectIds('label.team=core', [4, 0]);
    await expectIds('label.team=web', [1]);
    await expectIds('label.priority=3', [0]);
    await expectIds('label.priority=4', []);
  });

  it('filters by a file path named in an item or in metrics.filesModified', async () => {
    await expectIds('file=src/alpha.ts', [0]);
    await expectIds('file=src/metrics-only.ts', [0]);
    // Every list an item's files name (created, modified, deleted) in every item list, as a path or as { path }.
    await expectIds('file=src/object-ref.ts', [0]);
    await expectIds('file=src/blocked-gone.ts', [0]);
    await expectIds('file=src/metrics-object.ts', [0]);
    await expectIds('file=src/none.ts', []);
  });

  it('filters by a from/to range of creation time, both ends inclusive', async () => {
    await expectIds(`from=${minute(1)}&to=${minute(3)}`, [3, 2, 1]);
    await expectIds(`from=${minute(4)}`, [4]);
    await expectIds(`to=${minute(0)}`, [0]);
    await expectIds(`from=${encodeURIComponent('2025-03-01T11:02:00+01:00')}&to=${encodeURIComponent('2025-03-01T11:02:00+01:00')}`, [2]);
  });

  it('searches whole words of items and decisions case-insensitively with q, every word required', async () => {
    await expectIds('q=widget%20FACTORY', [1]);
    await expectIds('q=postgresql', [0]);
    await expectIds('q=ALPHA%20work', [0]);
    await expectIds('q=no-such-words', []);
    await expectIds('q=postgres', []);
    await expectIds('q=widget%20postgresql', []);
  });

  it('combines filters with AND', async () => {
    await expectIds('agentId=agent-1&phase=implementing', [4, 0]);
    await expectIds('agentId=agent-1&taskId=task-c&label.team=core', [4]);
    await expectIds('taskId=task-a&status=finalized', []);
    await expectIds(`agentId=agent-1&from=${minute(1)}`, [4, 2]);
    await expectIds('label.team=core&q=postgresql&file=src/alpha.ts', [0]);
  });

  it('follows index changes: a patched phase is found under its new value only', async () => {
    const patched = await app().app.inject({
      method: 'PATCH',
      url: `/v1/checkpoints/${String(c[4]!.id)}`,
      headers: { ...auth(), 'if-match': '"1"' },
      payload: { executionState: { phase: 'testing' } },
    });
    expect(patched.statusCode).toBe(200);
    await expectIds('phase=testing', [4, 2]);
    await expectIds('phase=implementing', [0]);
  });

  it('pages with limit and cursor, every match exactly once, no nextCursor on the last page', async () => {
    const pages = await allPages('/v1/checkpoints?agentId=agent-1&limit=2');
    expect(pages.map((p) => p.length)).toEqual([2, 1]);
    expect(pages.flat()).toEqual([4, 2, 0].map((i) => c[i]!.id));
    const everything = await allPages('/v1/checkpoints?limit=1');
    expect(everything.flat()).toEqual([4, 3, 2, 1, 0].map((i) => c[i]!.id));
  });

  it('refuses an invalid cursor, an unknown phase and a limit over 1000 with 400', async () => {
    const cases: [string, string][] = [
      ['cursor=garbage!', 'invalid_cursor'],
      [`cursor=${Buffer.from('{"s":3}').toString('base64url')}`, 'invalid_cursor'],
      ['phase=sleeping', 'validation_failed'],
      ['limit=1001', 'validation_failed'],
      ['from=yesterday', 'validation_failed'],
    ];
    for (const [query, code] of cases) {
      const res = await app().app.inject({ method: 'GET', url: `/v1/checkpoints?${query}`, headers: auth() });
      expect(res.statusCode, query).toBe(400);
      expect((res.json() as Json).code, query).toBe(code);
    }
  });
});
