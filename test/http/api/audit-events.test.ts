/**
 * The audit trail (DESIGN §4: hash-chained, verifiable, exportable) and the
 * event feed (DESIGN §3: CloudEvents 1.0 in commit order, with cursors).
 */
import { describe, expect, it } from 'vitest';
import { chainHash, type AuditEntry } from '../../../src/domain/audit.js';
import { decodeValue, encodeValue, tenantKeyspace } from '../../../src/store/keyspace.js';
import { auth, checkpointBody, useTestApp } from '../../support/app.js';

type Json = Record<string, unknown>;

const testApp = useTestApp();

async function create(taskId: string, extra: Json = {}): Promise<Json> {
  const res = await testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody(taskId, extra) });
  expect(res.statusCode).toBe(201);
  return res.json() as Json;
}

async function ok(method: 'POST' | 'PATCH', url: string, payload: Json, headers: Record<string, string> = {}): Promise<Json> {
  const res = await testApp().app.inject({ method, url, headers: { ...auth(), ...headers }, payload });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json() as Json;
}

async function get(url: string, who: 'writer' | 'auditor' = 'writer', headers: Record<string, string> = {}) {
  return testApp().app.inject({ method: 'GET', url, headers: { ...auth(who), ...headers } });
}

/** Five changes to task-audit: create A, create B, patch A, link A → B, finalize A. */
async function fiveChanges(): Promise<{ a: Json; b: Json }> {
  const a = await create('task-audit');
  const b = await create('task-audit');
  await ok('PATCH', `/v1/checkpoints/${String(a.id)}`, { labels: { step: 'patched' } }, { 'if-match': '"1"' });
  await ok('POST', `/v1/checkpoints/${String(a.id)}/links`, { childId: b.id });
  await ok('POST', `/v1/checkpoints/${String(a.id)}/finalize`, { status: 'completed' });
  return { a, b };
}

describe('audit trail', () => {
  it('appends one hash-chained entry per change, with the actor and its role', async () => {
    const { a, b } = await fiveChanges();
    const res = await get('/v1/tasks/task-audit/audit', 'auditor');
    expect(res.statusCode).toBe(200);
    const entries = (res.json() as { items: Json[] }).items;
    expect(entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(entries.map((e) => e.checkpointId)).toEqual([a.id, b.id, a.id, b.id, a.id]);
    expect(entries[0]!.prevHash).toMatch(/^[0-9a-f]{64}$/);
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      expect(entry.hash).toMatch(/^[0-9a-f]{64}$/);
      if (i > 0) expect(entry.prevHash).toBe(entries[i - 1]!.hash);
      expect(entry.actor).toMatchObject({ role: 'writer', subject: expect.any(String) });
      expect(Number.isNaN(Date.parse(String(entry.at)))).toBe(false);
      expect(entry.taskId).toBe('task-audit');
    }
    expect(new Set(entries.map((e) => e.action)).size).toBe(4);
    // The audit records the hash of what was written.
    const current = (await get(`/v1/checkpoints/${String(a.id)}`)).json() as Json;
    expect(entries[4]!.afterHash).toBe((current.compliance as Json).hash);
  });

  it('keeps one unbroken chain when writes to a task arrive concurrently', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => testApp().app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: checkpointBody('task-busy') })),
    );
    expect(answers.every((r) => r.statusCode === 201)).toBe(true);
    const entries = ((await get('/v1/tasks/task-busy/audit', 'auditor')).json() as { items: Json[] }).items;
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(new Set(entries.map((e) => e.checkpointId))).toEqual(new Set(answers.map((r) => (r.json() as Json).id)));
    expect((await get('/v1/tasks/task-busy/audit/verify', 'auditor')).json()).toEqual({ ok: true, entries: 12 });
    // Events come in the same (commit) order as the task's history.
    const history = ((await get('/v1/tasks/task-busy/checkpoints')).json() as { items: Json[] }).items.map((c) => c.id).reverse();
    const created = ((await get('/v1/events?types=CHECKPOINT_CREATED')).json() as { items: Json[] }).items.map((e) => e.subject);
    expect(created).toEqual(history);
    expect(entries.map((e) => e.checkpointId)).toEqual(history);
  });

  it('pages audit entries with limit and cursor', async () => {
    await fiveChanges();
    const first = (await get('/v1/tasks/task-audit/audit?limit=2', 'auditor')).json() as { items: Json[]; nextCursor?: string };
    expect(first.items.map((e) => e.seq)).toEqual([1, 2]);
    const rest = (await get(`/v1/tasks/task-audit/audit?limit=3&cursor=${encodeURIComponent(first.nextCursor!)}`, 'auditor')).json() as {
      items: Json[];
      nextCursor?: string;
    };
    expect(rest.items.map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(rest).not.toHaveProperty('nextCursor');
  });

  it('verifies an intact chain: { ok: true, entries: n }', async () => {
    await fiveChanges();
    const res = await get('/v1/tasks/task-audit/audit/verify', 'auditor');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, entries: 5 });
  });

  it('pinpoints an entry changed in the store: ok false, firstBrokenSeq 2', async () => {
    await fiveChanges();
    const key = tenantKeyspace('default').audit.pack('task-audit', 2);
    await testApp().store.transact(async (tx) => {
      const bytes = await tx.get(key);
      expect(bytes).toBeDefined();
      const entry = decodeValue<Json>(bytes!);
      tx.set(key, encodeValue({ ...entry, at: '2000-01-01T00:00:00.000Z' }));
    });
    const res = await get('/v1/tasks/task-audit/audit/verify', 'auditor');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, firstBrokenSeq: 2 });
  });

  describe('says what it expected and what it found where the chain broke', () => {
    const key = (seq: number) => tenantKeyspace('default').audit.pack('task-audit', seq);
    const stored = async (seq: number): Promise<AuditEntry> => {
      let entry: AuditEntry | undefined;
      await testApp().store.transact(async (tx) => {
        entry = decodeValue<AuditEntry>((await tx.get(key(seq)))!);
      });
      return entry!;
    };
    const verify = async () => (await get('/v1/tasks/task-audit/audit/verify', 'auditor')).json() as Json;

    it('a changed entry: the hash recomputed from its content, and the hash stored with it', async () => {
      await fiveChanges();
      const tampered = { ...(await stored(2)), at: '2000-01-01T00:00:00.000Z' };
      await testApp().store.transact(async (tx) => tx.set(key(2), encodeValue(tampered)));
      const { hash, ...body } = tampered;
      expect(await verify()).toEqual({ ok: false, entries: 2, firstBrokenSeq: 2, reason: 'hash mismatch', expected: { hash: chainHash(body.prevHash, body) }, found: { hash } });
    });

    it('a broken link: the hash of the entry before, and the prevHash found', async () => {
      await fiveChanges();
      const before = await stored(2);
      const relinked = { ...(await stored(3)), prevHash: 'f'.repeat(64) };
      await testApp().store.transact(async (tx) => tx.set(key(3), encodeValue(relinked)));
      expect(await verify()).toEqual({ ok: false, entries: 3, firstBrokenSeq: 3, reason: 'broken link', expected: { prevHash: before.hash }, found: { prevHash: 'f'.repeat(64) } });
    });

    it('a removed entry: the sequence number expected, and the one found in its place', async () => {
      await fiveChanges();
      await testApp().store.transact(async (tx) => tx.clear(key(2)));
      expect(await verify()).toEqual({ ok: false, entries: 2, firstBrokenSeq: 2, reason: 'missing entry', expected: { seq: 2 }, found: { seq: 3 } });
    });

    it('entries cut off the end: the last sequence number the task remembers, and the last one found', async () => {
      await fiveChanges();
      await testApp().store.transact(async (tx) => tx.clear(key(5)));
      expect(await verify()).toEqual({ ok: false, entries: 4, firstBrokenSeq: 5, reason: 'missing entry', expected: { seq: 5 }, found: { seq: 4 } });
    });
  });

  it('exports the trail as NDJSON: one JSON entry per line', async () => {
    await fiveChanges();
    const paged = ((await get('/v1/tasks/task-audit/audit', 'auditor')).json() as { items: Json[] }).items;
    const res = await get('/v1/tasks/task-audit/audit', 'auditor', { accept: 'application/x-ndjson' });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/x-ndjson/);
    const lines = res.body.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(5);
    expect(lines.map((line) => JSON.parse(line) as Json)).toEqual(paged);
  });

  it('answers 404 for the audit of an unknown task', async () => {
    for (const url of ['/v1/tasks/ghost/audit', '/v1/tasks/ghost/audit/verify']) {
      const res = await get(url, 'auditor');
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found' });
    }
    expect((await get('/v1/tasks/ghost/audit', 'auditor', { accept: 'application/x-ndjson' })).statusCode).toBe(404);
  });
});

describe('GET /v1/events', () => {
  type Event = Json & { cursor: string; type: string; data: Json };
  const events = async (query = ''): Promise<{ items: Event[]; nextCursor?: string }> => {
    const res = await get(`/v1/events${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { items: Event[]; nextCursor?: string };
  };

  it('returns CloudEvents 1.0 for each change, in commit order', async () => {
    const { a, b } = await fiveChanges();
    const c = await create('task-other', { parentId: b.id });
    const { items } = await events();
    expect(items.map((e) => [e.type, e.subject])).toEqual([
      ['CHECKPOINT_CREATED', a.id],
      ['CHECKPOINT_CREATED', b.id],
      ['CHECKPOINT_UPDATED', a.id],
      ['CHECKPOINTS_LINKED', b.id],
      ['CHECKPOINT_FINALIZED', a.id],
      ['CHECKPOINT_CREATED', c.id],
      ['CHECKPOINTS_LINKED', c.id],
    ]);
    for (const e of items) {
      expect(e.specversion).toBe('1.0');
      expect(typeof e.id).toBe('string');
      expect(e.source).toEqual(expect.any(String));
      expect(String(e.source)).not.toBe('');
      expect(Number.isNaN(Date.parse(String(e.time)))).toBe(false);
      expect(e.data).toEqual(expect.any(Object));
    }
    expect(new Set(items.map((e) => e.id)).size).toBe(items.length);
    expect(items[3]!.data).toMatchObject({ parentId: a.id, childId: b.id });
    expect(items[4]!.data).toMatchObject({ finalStatus: 'completed' });
  });

  it('filters by types', async () => {
    const { a, b } = await fiveChanges();
    const { items } = await events('?types=CHECKPOINT_FINALIZED,CHECKPOINTS_LINKED');
    expect(items.map((e) => [e.type, e.subject])).toEqual([
      ['CHECKPOINTS_LINKED', b.id],
      ['CHECKPOINT_FINALIZED', a.id],
    ]);
  });

  it('continues after a cursor without repeating, and pages with limit and nextCursor', async () => {
    await fiveChanges();
    const all = (await events()).items;
    const after = (await events(`?after=${all[1]!.cursor}`)).items;
    expect(after.map((e) => e.id)).toEqual(all.slice(2).map((e) => e.id));

    const seen: string[] = [];
    let cursor: string | undefined;
    const sizes: number[] = [];
    do {
      const page = await events(`?limit=2${cursor ? `&after=${cursor}` : ''}`);
      sizes.push(page.items.length);
      seen.push(...page.items.map((e) => e.id as string));
      cursor = page.nextCursor;
    } while (cursor !== undefined && sizes.length < 10);
    expect(seen).toEqual(all.map((e) => e.id));
    expect(sizes).toEqual([2, 2, 1]);

    // New events arrive after the last cursor seen.
    await create('task-later');
    const later = (await events(`?after=${all[all.length - 1]!.cursor}`)).items;
    expect(later.map((e) => e.type)).toEqual(['CHECKPOINT_CREATED']);
  });

  it('omits nextCursor on the last page when the events fill it exactly', async () => {
    await create('task-even');
    await create('task-even');
    const page = await events('?limit=2');
    expect(page.items).toHaveLength(2);
    expect(page).not.toHaveProperty('nextCursor');
  });

  it('refuses an unknown type and a bad cursor with 400', async () => {
    const unknown = await get('/v1/events?types=CHECKPOINT_CREATED,CHECKPOINT_EXPLODED');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ field: 'query.types' })] });
    for (const after of ['not-a-cursor', 'zz'.repeat(12)]) {
      const bad = await get(`/v1/events?after=${after}`);
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ code: 'invalid_cursor' });
    }
  });
});
