/**
 * `baton/client` from plain Node: a separate process imports the package's
 * `./client` export (self-reference through package.json `exports`) with
 * every server module made unloadable, and talks to a real server. `.` is
 * not exported: the server is run (`npm start`), not imported.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS } from '../support/app.js';
import { listen, type Listening } from './support/server.js';

const GUARD = './test/client/support/no-server-modules.mjs';

/** Runs `code` as an ES module in a fresh Node with the tsx loader and the guard; its exit code and output. */
function node(code: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', GUARD, '--input-type=module', '-e', code], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', (exitCode) => {
      clearTimeout(timer);
      resolve({ code: exitCode, out });
    });
  });
}

describe('the baton/client package export', () => {
  let server: Listening;

  beforeAll(async () => {
    server = await listen();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('loads in plain Node without any server module and drives a real server', async () => {
    const { code, out } = await node(
      `import { BatonClient, BatonError } from 'baton/client';
       const client = new BatonClient({ baseUrl: process.env.BASE_URL, token: process.env.TOKEN });
       const created = await client.checkpoints.create({ taskId: 'package-task', agentId: 'agent-1' });
       const refused = await client.checkpoints.get('not-a-uuid').catch((e) => e);
       console.log(JSON.stringify({ taskId: created.taskId, version: created.version, refused: refused instanceof BatonError ? refused.code : String(refused) }));`,
      { BASE_URL: server.url, TOKEN: TOKENS.writer },
    );
    expect(out).not.toContain('A server module was loaded');
    expect(code, out).toBe(0);
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ taskId: 'package-task', version: 1, refused: 'validation_failed' });
  });

  it('the guard does stop a server module from loading (so the test above can fail)', async () => {
    const { code, out } = await node(`await import('./src/app.ts');`);
    expect(code).not.toBe(0);
    expect(out).toContain('A server module was loaded');
  });

  it('loads each framework adapter (baton/openai-agents, baton/a2a, baton/langgraph-api) without any server module', async () => {
    const { code, out } = await node(
      `const names = {};
       for (const name of ['baton/openai-agents', 'baton/a2a', 'baton/langgraph-api', 'baton/langgraph']) names[name] = Object.keys(await import(name)).sort();
       console.log(JSON.stringify(names));`,
    );
    expect(out).not.toContain('A server module was loaded');
    expect(code, out).toBe(0);
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({
      'baton/openai-agents': ['BatonSession', 'CorruptedError', 'loadRunState', 'saveRunState'],
      'baton/a2a': ['BatonTaskStore'],
      'baton/langgraph-api': ['BatonThreadSaver', 'createLangGraphApi', 'serveLangGraphApi'],
      'baton/langgraph': ['BatonSaver'],
    });
  });

  it('exports nothing at the package root', async () => {
    const { code, out } = await node(`await import('baton');`);
    expect(code).not.toBe(0);
    expect(out).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });
});
