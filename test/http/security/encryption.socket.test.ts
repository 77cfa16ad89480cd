/**
 * Encryption at rest end to end, the service started as the README says
 * with BATON_ENCRYPTION_KEY_FILE: checkpoints carrying unique words in their
 * items, decisions, labels, file paths and continuation prompt are written,
 * one is handed off, one is queued while the store is down, and the process
 * is killed; no file under the data directory (store and queue) holds any of
 * those words. After a restart everything reads, verifies and is found by
 * search; after a rotation and `rekey`, old and new records read and the old
 * key is forgotten; a key file that lacks a key the store uses refuses to
 * start, naming it. A service without a key file, written the same way, is
 * the control: its files do hold the words.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointBody, TOKENS } from '../../support/app.js';
import { exited, removeDir, startBaton, stopBaton, tempDataDir, WRITER } from '../../support/crash-server.js';

const ADMIN = { authorization: `Bearer ${TOKENS.admin}` };
const AUDITOR = { authorization: `Bearer ${TOKENS.auditor}` };
const FLAG = ['--enable-fault-injection'];

/** One word per place a checkpoint carries a tenant's text. */
const WORDS = {
  item: 'quixoticzebra',
  decision: 'marzipanvortex',
  label: 'labelkumquat',
  file: 'pathwombat',
  prompt: 'promptnarwhal',
  note: 'notepangolin',
  agent: 'agentocelot',
  queued: 'queuedaardvark',
};

const dirs: string[] = [];
let child: ChildProcess | undefined;
afterAll(async () => {
  await stopBaton(child);
  for (const dir of dirs) removeDir(dir);
});

function keyLine(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

async function call(url: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...WRITER, ...init.headers } });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

function body(taskId: string, word = WORDS.item): Record<string, unknown> {
  return checkpointBody(taskId, {
    agentId: WORDS.agent,
    executionState: {
      phase: 'implementing',
      completedItems: [`wrote the ${word} parser`],
      pendingItems: [{ id: 'p1', description: 'wire the CLI', files: { modified: [`src/${WORDS.file}.ts`] } }],
      blockedItems: [],
    },
    contextSummary: { keyDecisions: [{ decision: `use ${WORDS.decision}`, rationale: 'it fits' }] },
    recovery: { continuationPrompt: `Continue with ${WORDS.prompt}.` },
    labels: { project: WORDS.label },
  });
}

/** The words found in any file under `dir`, with the file. */
function plaintextOnDisk(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = readFileSync(path);
    for (const word of Object.values(WORDS)) if (bytes.includes(word)) found.push(`${word} in ${path}`);
  }
  return found;
}

/** Writes the checkpoints, the handoff and the queued write; answers the created ids. */
async function writeEverything(url: string): Promise<{ first: string; handedOff: string }> {
  const first = await call(`${url}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(body('enc-task-1')) });
  expect(first.status).toBe(201);
  const second = await call(`${url}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(body('enc-task-2')) });
  expect(second.status).toBe(201);
  const handedOff = (second.body as { id: string }).id;
  const handoff = await call(`${url}/v1/checkpoints/${handedOff}/handoff`, { method: 'POST', body: JSON.stringify({ trigger: 'context_limit', note: `hand over the ${WORDS.note}` }) });
  expect(handoff.status).toBe(201);
  expect((await call(`${url}/v1/admin/faults`, { method: 'POST', headers: ADMIN, body: JSON.stringify({ store: 'unavailable' }) })).status).toBe(200);
  const queued = await call(`${url}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(body('enc-task-3', WORDS.queued)) });
  expect(queued.status).toBe(202);
  return { first: (first.body as { id: string }).id, handedOff };
}

async function drained(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((((await call(`${url}/readyz`)).body.queue as { depth: number } | undefined)?.depth ?? 0) > 0) {
    if (Date.now() > deadline) throw new Error('The queue did not drain.');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function kill(server: { child: ChildProcess }): Promise<void> {
  server.child.kill('SIGKILL');
  expect(await exited(server.child)).toBe(true);
}

describe('encryption at rest', () => {
  it('leaves none of a checkpoint’s words on disk; reads, verifies, searches, rotates, and refuses a key file without a used key', { timeout: 180_000 }, async () => {
    const dir = tempDataDir('baton-sealed-');
    dirs.push(dir);
    const keyFile = join(dir, '..', `${dir.split('/').pop()}-keys`);
    dirs.push(keyFile);
    const k1 = keyLine('k1');
    writeFileSync(keyFile, `# test keys\n${k1}\n`);
    const env = { BATON_ENCRYPTION_KEY_FILE: keyFile, BATON_QUEUE_REPLAY_MS: '50' };

    let server = await startBaton(dir, env, 60_000, FLAG);
    child = server.child;
    const { first, handedOff } = await writeEverything(server.url);
    await kill(server);
    expect(plaintextOnDisk(dir)).toEqual([]);

    // Restarted: the queued write replays, and everything reads, verifies and is found.
    server = await startBaton(dir, env, 60_000, FLAG);
    child = server.child;
    await drained(server.url);
    const read = await call(`${server.url}/v1/checkpoints/${first}`);
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).toContain(WORDS.prompt);
    expect((await call(`${server.url}/v1/tasks/enc-task-2/audit/verify`, { headers: AUDITOR })).body).toMatchObject({ ok: true });
    const found = async (query: string) => ((await call(`${server.url}/v1/checkpoints?${query}`)).body.items as { id: string; taskId: string }[]).map((c) => c.taskId).sort();
    expect(await found(`q=${WORDS.item}`)).toEqual(['enc-task-1', 'enc-task-2']);
    expect(await found(`q=${WORDS.queued}`)).toEqual(['enc-task-3']);
    expect(await found(`q=${WORDS.decision}&taskId=enc-task-1`)).toEqual(['enc-task-1']);
    expect(await found(`label.project=${WORDS.label}&taskId=enc-task-3`)).toEqual(['enc-task-3']);
    expect(await found(`file=${encodeURIComponent(`src/${WORDS.file}.ts`)}&taskId=enc-task-1`)).toEqual(['enc-task-1']);
    expect((await found(`agentId=${WORDS.agent}`)).length).toBeGreaterThanOrEqual(3);
    expect((await call(`${server.url}/v1/checkpoints/${handedOff}`)).body).toMatchObject({ executionState: { phase: 'handoff' } });
    await stopBaton(server.child);
    expect(plaintextOnDisk(dir)).toEqual([]);

    // Rotation: k2 seals new writes, k1 still opens; rekey moves everything to k2 and forgets k1.
    writeFileSync(keyFile, `${k1}\n${keyLine('k2')}\n`);
    server = await startBaton(dir, env, 60_000, FLAG);
    child = server.child;
    const after = await call(`${server.url}/v1/checkpoints`, { method: 'POST', body: JSON.stringify(body('enc-task-4')) });
    expect(after.status).toBe(201);
    expect((await call(`${server.url}/v1/checkpoints/${first}`)).status).toBe(200);
    expect((await call(`${server.url}/v1/admin/rekey`, { method: 'POST', headers: ADMIN, body: '{}' })).status).toBe(202);
    let status: Record<string, unknown> = {};
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      status = (await call(`${server.url}/v1/admin/rekey`, { headers: ADMIN })).body;
      if (status.state !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toMatchObject({ state: 'done', retired: ['k1'] });
    expect(status.resealed as number).toBeGreaterThan(10);
    expect(await found(`q=${WORDS.item}`)).toEqual(['enc-task-1', 'enc-task-2', 'enc-task-4']);
    await stopBaton(server.child);

    // k1 is no longer needed: a key file of k2 alone starts and reads the oldest checkpoint.
    const k2Only = readFileSync(keyFile, 'utf8').split('\n')[1]!;
    writeFileSync(keyFile, `${k2Only}\n`);
    server = await startBaton(dir, env, 60_000, FLAG);
    child = server.child;
    const oldest = await call(`${server.url}/v1/checkpoints/${first}`);
    expect(oldest.status).toBe(200);
    expect(JSON.stringify(oldest.body)).toContain(WORDS.item);
    await stopBaton(server.child);

    // A key file without k2 refuses to start, naming the key.
    writeFileSync(keyFile, `${keyLine('k3')}\n`);
    const refused = await startBaton(dir, env, 60_000, FLAG).then(
      (running) => {
        child = running.child;
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/encryption key "k2"/);
  });

  it('control: without a key file the same writes leave their words on disk', { timeout: 60_000 }, async () => {
    const dir = tempDataDir('baton-plain-');
    dirs.push(dir);
    const server = await startBaton(dir, { BATON_QUEUE_REPLAY_MS: '50' }, 60_000, FLAG);
    child = server.child;
    await writeEverything(server.url);
    await kill(server);
    const found = plaintextOnDisk(dir).join('\n');
    for (const word of [WORDS.item, WORDS.decision, WORDS.label, WORDS.file, WORDS.prompt, WORDS.note, WORDS.queued]) expect(found).toContain(word);
  });
});
