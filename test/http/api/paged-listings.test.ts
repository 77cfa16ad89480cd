/**
 * Revisions and lineage over HTTP answer in pages: `limit` and `cursor` as
 * every other list, following the cursors gives every entry once.
 */
import { expect, it } from 'vitest';
import { auth, checkpointBody, useTestApp, type TestApp } from '../../support/app.js';
import { expectProblem, type Json } from '../../support/problems.js';

const app = useTestApp();

async function all(t: TestApp, url: string, key: (page: Json) => unknown[]): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const res = await t.app.inject({ method: 'GET', url: `${url}?limit=2${cursor ? `&cursor=${cursor}` : ''}`, headers: auth() });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as Json;
    out.push(...key(page));
    cursor = page.nextCursor as string | undefined;
    if (cursor === undefined) return out;
  }
  throw new Error('The cursors did not end.');
}

it('pages revisions and lineage with limit and cursor, every entry once', async () => {
  const t = app();
  const post = async (body: Json) => (await t.app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: body })).json() as Json;
  const root = await post(checkpointBody('paged'));
  for (let v = 1; v <= 4; v++) {
    const res = await t.app.inject({ method: 'PATCH', url: `/v1/checkpoints/${root.id}`, headers: { ...auth(), 'if-match': `"${v}"` }, payload: { labels: { v } } });
    expect(res.statusCode).toBe(200);
  }
  const revisions = await all(t, `/v1/checkpoints/${root.id}/revisions`, (page) => (page.items as Json[]).map((r) => r.version));
  expect(revisions).toEqual([1, 2, 3, 4, 5]);

  let parent = root;
  const chain = [root.id];
  for (let i = 0; i < 4; i++) {
    parent = await post(checkpointBody('paged', { parentId: parent.id }));
    chain.push(parent.id);
  }
  const ancestors = await all(t, `/v1/checkpoints/${parent.id}/lineage`, (page) => (page.ancestors as Json[]).map((n) => n.id));
  expect(ancestors).toEqual(chain.slice(0, -1).reverse());
  expectProblem(await t.app.inject({ method: 'GET', url: `/v1/checkpoints/${root.id}/revisions?limit=0`, headers: auth() }), 400, 'validation_failed');
  expectProblem(await t.app.inject({ method: 'GET', url: `/v1/checkpoints/${root.id}/lineage?cursor=nonsense`, headers: auth() }), 400, 'invalid_cursor');
});
