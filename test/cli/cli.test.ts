/**
 * The `baton` command as a user runs it: `npx baton`-style, as a real child
 * process (bin/baton.mjs), against a real server on a socket whose token
 * file `baton tokens hash` wrote. `watch` keeps a project's pipeline
 * checkpoint file in Baton across changes and restarts; `verify` walks the
 * audit chains over HTTP and on the data directory, where an altered entry
 * makes it fail naming the task and the entry.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { configSchema } from '../../src/config.js';
import { loadOrCreateSigner } from '../../src/service/signing.js';
import { LmdbStore } from '../../src/store/lmdb.js';
import { tenantKeyspace, encodeValue, decodeValue } from '../../src/store/keyspace.js';
import type { FastifyInstance } from 'fastify';
import { checkpointBody } from '../support/app.js';

const BIN = new URL('../../bin/baton.mjs', import.meta.url).pathname;
const TOKEN = 'cli-writer-token-0123456789abcdef';
const AUDITOR = 'cli-auditor-token-0123456789abcde';
const PIPELINE = readFileSync(new URL('../formats/fixtures/seed-002-pipeline-stage3.json', import.meta.url), 'utf8');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function baton(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const work = mkdtempSync(join(tmpdir(), 'baton-cli-'));
const dataDir = join(work, 'data');
let app: FastifyInstance;
let store: LmdbStore;
let url: string;

async function start(): Promise<void> {
  store = LmdbStore.open({ path: dataDir });
  const config = configSchema.parse({ dataDir, tokensFile: join(work, 'tokens'), logLevel: 'silent' });
  app = await buildApp({ config, store, signer: loadOrCreateSigner(join(work, 'signing-key.pem')) });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
}

async function stop(): Promise<void> {
  app.server.closeAllConnections();
  await app.close();
  await store.close();
}

async function history(taskId: string): Promise<{ id: string; labels: Record<string, unknown>; extensions: Record<string, unknown> }[]> {
  const res = await fetch(`${url}/v1/tasks/${taskId}/checkpoints`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return ((await res.json()) as { items: [] }).items;
}

beforeAll(async () => {
  const writer = await baton(['tokens', 'hash', 'writer', TOKEN]);
  const auditor = await baton(['tokens', 'hash', 'auditor', AUDITOR]);
  expect(writer).toMatchObject({ code: 0, stdout: expect.stringMatching(/^writer:[0-9a-f]{64}\n$/) });
  writeFileSync(join(work, 'tokens'), `${writer.stdout}${auditor.stdout}`);
  await start();
});
afterAll(async () => {
  await stop().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
});

describe('baton', () => {
  it('answers --help with its commands, and a wrong command line with exit code 2', async () => {
    const help = await baton(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['serve', 'verify', 'export', 'import', 'watch', 'rekey', 'tokens']) expect(help.stdout).toContain(command);
    expect((await baton(['no-such-command'])).code).toBe(2);
    expect((await baton(['tokens', 'hash', 'root', 'x'])).code).toBe(2);
  });

  it('watch: a pipeline checkpoint file written, then changed, is the task’s latest each time; a restart writes nothing twice; a broken file is reported and skipped', async () => {
    const project = join(work, 'project');
    mkdirSync(join(project, '.pipeline'), { recursive: true });
    const file = join(project, '.pipeline', 'checkpoint-PROJ-42.json');
    const watch = (): Promise<Run> => baton(['watch', project, '--once', '--url', url], { BATON_TOKEN: TOKEN });

    writeFileSync(file, PIPELINE);
    writeFileSync(join(project, '.pipeline', 'checkpoint-BROKEN.json'), '{ "storyId": ');
    const first = await watch();
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/checkpoint-PROJ-42\.json: checkpoint \S+ of task PROJ-42/);
    expect(first.stdout).toMatch(/checkpoint-BROKEN\.json: skipped, .*validation_failed/);
    expect(await history('PROJ-42')).toHaveLength(1);

    writeFileSync(file, PIPELINE.replace('"qualityScore": 92', '"qualityScore": 97'));
    expect((await watch()).code).toBe(0);
    const after = await history('PROJ-42');
    expect(after).toHaveLength(2);
    expect(JSON.stringify(after[0])).toContain('97');

    // A restarted watcher sees the same files: nothing is written twice.
    const again = await watch();
    expect(again.code).toBe(0);
    expect(again.stdout).not.toMatch(/PROJ-42\.json: checkpoint/);
    expect(await history('PROJ-42')).toHaveLength(2);
  });

  it('watch: a builder-state.json is kept with the SHA-256 of each file it names that exists in the project, for exact stale-checks', async () => {
    const project = join(work, 'builder');
    mkdirSync(join(project, 'src', 'contexts'), { recursive: true });
    writeFileSync(join(project, 'src', 'contexts', 'ThemeContext.tsx'), 'export const ThemeContext = {};\n');
    writeFileSync(join(project, 'builder-state.json'), readFileSync(new URL('../formats/fixtures/seed-000-builder-state.json', import.meta.url)));
    const run = await baton(['watch', project, '--once', '--task', 'dark-mode', '--url', url, '--token', TOKEN]);
    expect(run.stdout).toMatch(/builder-state\.json: checkpoint \S+ of task dark-mode/);
    const [stored] = await history('dark-mode');
    const expected = createHash('sha256').update('export const ThemeContext = {};\n').digest('hex');
    expect(JSON.stringify(stored)).toContain(JSON.stringify({ path: 'src/contexts/ThemeContext.tsx', sha256: expected }));
    // A file the checkpoint names that is not in the project stays a plain path.
    expect(JSON.stringify(stored)).toContain('"src/App.tsx"');
  });

  it('import and export: a file in, the same checkpoint out in a format and as an evidence bundle', async () => {
    const file = join(work, 'stage.json');
    writeFileSync(file, PIPELINE.replace('PROJ-42', 'PROJ-77'));
    const imported = await baton(['import', file, '--format', 'pipeline', '--url', url, '--token', TOKEN]);
    expect(imported).toMatchObject({ code: 0, stdout: expect.stringMatching(/imported: checkpoint \S+ of task PROJ-77/) });
    expect((await baton(['import', file, '--format', 'pipeline', '--url', url, '--token', TOKEN])).stdout).toMatch(/already imported/);
    const id = (await history('PROJ-77'))[0]!.id;
    const exported = await baton(['export', id, '--format', 'pipeline', '--url', url, '--token', TOKEN]);
    expect(JSON.parse(exported.stdout)).toMatchObject({ storyId: 'PROJ-77', qualityScore: 92 });
    // The evidence bundle is for auditors: the writer's token is refused with exit code 4.
    expect((await baton(['export', 'PROJ-77', '--out', join(work, 'e.tar'), '--url', url, '--token', TOKEN])).code).toBe(4);
    expect((await baton(['export', 'PROJ-77', '--out', join(work, 'e.tar'), '--url', url, '--token', AUDITOR])).code).toBe(0);
    expect(readFileSync(join(work, 'e.tar')).subarray(257, 262).toString()).toBe('ustar');
  });

  it('verify: 0 when every chain holds; 3 when the server cannot be reached', async () => {
    const ok = await baton(['verify', '--url', url], { BATON_TOKEN: AUDITOR });
    expect(ok).toMatchObject({ code: 0, stdout: expect.stringMatching(/ok: \d+ tasks, \d+ audit entries, every chain holds/) });
    expect((await baton(['verify', 'PROJ-42', '--url', url, '--token', AUDITOR])).code).toBe(0);
    expect((await baton(['verify', '--url', 'http://127.0.0.1:9', '--token', AUDITOR])).code).toBe(3);
  });

  it('verify --data-dir: non-zero naming the task and entry when an audit entry was altered on disk, zero before', async () => {
    await stop();
    expect(await baton(['verify', '--data-dir', dataDir])).toMatchObject({ code: 0 });
    // Alter the second audit entry of PROJ-42 in the LMDB file: a changed actor, re-encoded as the store keeps it.
    const raw = LmdbStore.open({ path: dataDir });
    const audit = tenantKeyspace('default').audit;
    await raw.transact(async (tx) => {
      const key = audit.pack('PROJ-42', 2);
      const entry = decodeValue<{ actor: { subject: string } }>((await tx.get(key))!);
      entry.actor.subject = 'someone-else';
      tx.set(key, encodeValue(entry));
    });
    await raw.close();
    const broken = await baton(['verify', '--data-dir', dataDir]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/BROKEN task PROJ-42: entry 2/);
  });
});

describe('a store encrypted at rest', () => {
  const sealedDir = join(work, 'sealed');
  const keyFile = join(work, 'sealed-keys');
  const ADMIN = 'cli-admin-token-0123456789abcdef0';
  let sealedApp: FastifyInstance | undefined;
  let sealedStore: LmdbStore | undefined;
  let sealedUrl = '';

  beforeAll(async () => {
    writeFileSync(keyFile, `k-cli:${randomBytes(32).toString('base64')}\n`);
    const config = configSchema.parse({ dataDir: sealedDir, tokens: `writer:${TOKEN},admin:${ADMIN}`, logLevel: 'silent', encryptionKeyFile: keyFile });
    sealedStore = LmdbStore.open({ path: sealedDir });
    sealedApp = await buildApp({ config, store: sealedStore });
    sealedUrl = await sealedApp.listen({ port: 0, host: '127.0.0.1' });
    const made = await sealedApp.inject({ method: 'POST', url: '/v1/checkpoints', headers: { authorization: `Bearer ${TOKEN}` }, payload: checkpointBody('sealed-task') });
    expect(made.statusCode).toBe(201);
  });
  afterAll(async () => {
    await sealedApp?.close();
    await sealedStore?.close();
  });

  it('rekey: starts the re-seal pass and prints its status', async () => {
    const run = await baton(['rekey', '--url', sealedUrl, '--token', ADMIN]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ state: expect.stringMatching(/^(running|done)$/) });
  });

  it('verify --data-dir: names the key it needs without one, and verifies with --key-file or BATON_ENCRYPTION_KEY_FILE', async () => {
    await sealedApp!.close();
    await sealedStore!.close();
    sealedApp = undefined;
    sealedStore = undefined;
    const without = await baton(['verify', '--data-dir', sealedDir]);
    expect(without.code).toBe(2);
    expect(without.stderr).toMatch(/sealed with encryption key "k-cli": pass --key-file/);
    expect(await baton(['verify', '--data-dir', sealedDir, '--key-file', keyFile])).toMatchObject({ code: 0, stdout: expect.stringMatching(/every chain holds/) });
    expect(await baton(['verify', '--data-dir', sealedDir], { BATON_ENCRYPTION_KEY_FILE: keyFile })).toMatchObject({ code: 0 });
  });
});
