/**
 * Hostile documents at POST /v1/import: the seed examples truncated, with
 * bytes flipped, spliced into one another, and the classic attacks (entity
 * bomb, external entity, 10 MB front matter, invalid UTF-8). Each answer is a
 * 201 or a 4xx problem — never a 5xx — a refused document stores nothing, and
 * the server keeps answering.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fixture } from '../../../formats/support.js';
import { auth, useTestApp, type TestApp } from '../../../support/app.js';

const SEEDS: [string, string, string][] = [
  ['builder-state', 'application/json', 'seed-000-builder-state.json'],
  ['pipeline', 'application/json', 'seed-002-pipeline-stage3.json'],
  ['workflow-xml', 'application/xml', 'seed-003-error.xml'],
  ['markdown', 'text/markdown', 'seed-004-structure.md'],
];

let n = 0;

async function importOnce(t: TestApp, format: string, type: string, body: Buffer): Promise<void> {
  const taskId = `fuzz-import-${n++}`;
  const res = await t.app.inject({ method: 'POST', url: `/v1/import?format=${format}&taskId=${taskId}`, headers: { ...auth(), 'content-type': type }, payload: body });
  expect(res.statusCode === 201 || (res.statusCode >= 400 && res.statusCode < 500), `${format}: ${res.statusCode} ${res.body.slice(0, 200)}`).toBe(true);
  if (res.statusCode === 201) return;
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  expect(res.body).not.toMatch(/\bat .+\.(ts|js):\d+/);
  // A pipeline names its own task; the others take the query's. Either way a refusal wrote nothing.
  const task = await t.app.inject({ method: 'GET', url: `/v1/tasks/${taskId}`, headers: auth() });
  expect(task.statusCode).toBe(404);
}

describe('POST /v1/import with broken and hostile documents', () => {
  const app = useTestApp();

  it.each(SEEDS)('%s: truncated, flipped and spliced documents answer 201 or 4xx, never 5xx', async (format, type, name) => {
    const t = app();
    const seed = Buffer.from(fixture(name));
    const other = Buffer.from(fixture(SEEDS[(SEEDS.findIndex((s) => s[2] === name) + 1) % SEEDS.length]![2]));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.nat({ max: seed.length }).map((cut) => seed.subarray(0, cut)),
          fc.tuple(fc.nat({ max: seed.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => Buffer.concat([seed.subarray(0, at), Buffer.from([byte]), seed.subarray(at + 1)])),
          fc.tuple(fc.nat({ max: seed.length }), fc.nat({ max: other.length })).map(([a, b]) => Buffer.concat([seed.subarray(0, a), other.subarray(b)])),
        ),
        (body) => importOnce(t, format, type, body),
      ),
      { numRuns: 60 },
    );
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('refuses the classic attacks with 4xx and stays up', async () => {
    const t = app();
    const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('')}]><workflow_checkpoint>&lol9;</workflow_checkpoint>`;
    const external = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><workflow_checkpoint><next_step>&xxe;</next_step></workflow_checkpoint>';
    const hugeFrontMatter = `---\ncheckpoint: 1\nnote: "${'a'.repeat(10 * 1024 * 1024)}"\n---\n## Problem\nx\n`;
    const cases: [string, string, Buffer][] = [
      ['workflow-xml', 'application/xml', Buffer.from(bomb)],
      ['workflow-xml', 'application/xml', Buffer.from(external)],
      ['markdown', 'text/markdown', Buffer.from(hugeFrontMatter)],
      ['markdown', 'text/markdown', Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xc3, 0x28, 0x0a])],
      ['builder-state', 'application/json', Buffer.from('{"checkpoint": {"phase": 7}}')],
      ['pipeline', 'application/json', Buffer.from('[]')],
    ];
    for (const [format, type, body] of cases) await importOnce(t, format, type, body);
    const huge = await t.app.inject({ method: 'POST', url: '/v1/import?format=markdown&taskId=huge', headers: { ...auth(), 'content-type': 'text/markdown' }, payload: Buffer.from(hugeFrontMatter) });
    expect(huge.statusCode).toBe(413);
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
