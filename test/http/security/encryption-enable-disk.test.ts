/**
 * Turning encryption on leaves no plaintext behind: a plain store's
 * checkpoints carry unique words (items, decisions, labels, file paths,
 * agent id, continuation prompt); a key file is set and `rekey` runs to
 * done; then no file under the data directory holds any of those words, not
 * even in the pages LMDB freed when the plain values and index keys were
 * replaced. Before the rekey (the control) the files do hold them.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { useKeyedApp } from '../../support/keyed-app.js';
import { auth, checkpointBody } from '../../support/app.js';

const keyed = useKeyedApp('baton-enable-disk-');
const { dataDir, keyFile } = keyed;
/** One word per place a checkpoint carries a tenant's text. */
const WORDS = ['plainquokka', 'plainmarmot', 'plainlabelyak', 'plainpathgecko', 'plainagentlynx', 'plainpromptemu'];

async function stop(): Promise<void> {
  await keyed.stop();
}

/** The words found in any file under the data directory, with the file. */
function plaintextOnDisk(): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dataDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = readFileSync(path);
    for (const word of WORDS) if (bytes.includes(word)) found.push(`${word} in ${path}`);
  }
  return found;
}

function body(taskId: string, n: number): Record<string, unknown> {
  const [item, decision, label, file, agent, prompt] = WORDS;
  return checkpointBody(taskId, {
    agentId: agent,
    executionState: {
      phase: 'implementing',
      completedItems: [`wrote the ${item} parser, step ${n}`],
      pendingItems: [{ id: 'p1', description: 'wire the CLI', files: { modified: [`src/${file}.ts`] } }],
      blockedItems: [],
    },
    contextSummary: { keyDecisions: [{ decision: `use ${decision}`, rationale: 'it fits' }] },
    recovery: { continuationPrompt: `Continue with ${prompt}.` },
    labels: { project: label },
  });
}

it('leaves no plaintext of the values written before encryption in any file once rekey is done', { timeout: 120_000 }, async () => {
  let app = await keyed.start({ withKeys: false });
  let id = '';
  for (let n = 0; n < 3; n++) {
    const made = await app.inject({ method: 'POST', url: '/v1/checkpoints', headers: auth(), payload: body('plain-task', n) });
    expect(made.statusCode).toBe(201);
    id = made.json().id as string;
  }
  // An update makes a revision of the plain record too.
  const patched = await app.inject({
    method: 'PATCH',
    url: `/v1/checkpoints/${id}`,
    headers: { ...auth(), 'content-type': 'application/merge-patch+json', 'if-match': '"1"' },
    payload: { contextSummary: { assumptions: ['still plain'] } },
  });
  expect(patched.statusCode).toBe(200);
  // The indexer's merge puts the words' runs in the runs' own environment (`runs/`, `docs/storage.md`): the pass must clear them there too.
  for (let i = 0; i < 200 && !plaintextOnDisk().some((found) => found.startsWith(`${WORDS[0]} in ${join(dataDir, 'runs')}`)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(plaintextOnDisk()).toContain(`${WORDS[0]} in ${join(dataDir, 'runs', 'data.mdb')}`);
  await stop();
  // The control: a plain store's file holds the words.
  expect(plaintextOnDisk().join('\n')).toContain(WORDS[0]);

  writeFileSync(keyFile, `k1:${randomBytes(32).toString('base64')}\n`);
  app = await keyed.start();
  expect((await app.inject({ method: 'POST', url: '/v1/admin/rekey', headers: auth('admin'), payload: {} })).statusCode).toBe(202);
  let status: { state: string } = { state: 'running' };
  while (status.state === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 20));
    status = (await app.inject({ method: 'GET', url: '/v1/admin/rekey', headers: auth('admin') })).json();
  }
  expect(status).toMatchObject({ state: 'done' });
  // Done means done on disk: the files are checked while the service still runs, and again after it stops.
  expect(plaintextOnDisk()).toEqual([]);
  const read = await app.inject({ method: 'GET', url: `/v1/checkpoints/${id}`, headers: auth() });
  expect(read.statusCode).toBe(200);
  expect(read.body).toContain(WORDS[0]);
  expect((await app.inject({ method: 'GET', url: `/v1/checkpoints?q=${WORDS[0]}`, headers: auth() })).json().items).toHaveLength(3);
  await stop();
  expect(plaintextOnDisk()).toEqual([]);
});
