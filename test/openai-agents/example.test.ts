/**
 * examples/openai-agents run as a user runs it, each step its own process
 * over a real Baton on a real socket: a run paused for an approval in one
 * process is approved and finished in another from Baton alone, and a
 * process killed with SIGKILL while its approved tool runs is resumed by
 * a third from its last saved state.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS } from '../support/app.js';
import { listen, until, type Listening } from '../client/support/server.js';

const exec = promisify(execFile);
let server: Listening;

beforeAll(async () => {
  server = await listen();
});
afterAll(async () => {
  await server.close();
});

const env = (): NodeJS.ProcessEnv => ({ ...process.env, BATON_URL: server.url, BATON_TOKEN: TOKENS.writer });
const args = (...rest: string[]): string[] => ['--import', 'tsx', 'examples/openai-agents/run.ts', ...rest];

async function example(...rest: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await exec(process.execPath, args(...rest), { env: env(), timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

async function runStates(sessionId: string): Promise<number> {
  return (await server.client().checkpoints.search({ taskId: sessionId, labels: { 'oa.kind': 'run-state' }, limit: 100 })).items.length;
}

describe('examples/openai-agents', () => {
  it('pauses for an approval in one process and is approved and finished in another', async () => {
    const started = await example('start', 'release-1');
    expect(started.interruptions).toEqual([{ tool: 'publish_note', arguments: JSON.stringify({ text: 'Leases for OpenAI Agents sessions.' }) }]);

    const finished = await example('approve', 'release-1');
    expect(finished.finalOutput).toBe('Done, published: Leases for OpenAI Agents sessions.');
    // The session holds the one turn once: the user's message, the tool call, its result, the answer.
    expect(finished.items).toEqual(['message', 'function_call', 'function_call_result', 'message']);
    expect(finished.auditVerified).toBe(true);
    expect(await runStates('release-1')).toBe(3);
  }, 120_000);

  it('resumes a run whose process was killed with SIGKILL while its approved tool ran', async () => {
    await example('start', 'release-2');
    const child = spawn(process.execPath, args('approve', 'release-2'), { env: { ...env(), EXAMPLE_HANG_IN_TOOL: '1' }, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await until(() => output.includes('"publishing":true'), 'the approved tool runs', 60_000);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    // A new process finds the approved state (no approval asked again) and finishes the run.
    const resumed = await example('resume', 'release-2');
    expect(resumed.finalOutput).toBe('Done, published: Leases for OpenAI Agents sessions.');
    expect(resumed.items).toEqual(['message', 'function_call', 'function_call_result', 'message']);
    expect(resumed.auditVerified).toBe(true);
    expect((await server.client({ who: 'auditor' }).tasks.verifyAudit('release-2')).ok).toBe(true);
  }, 120_000);
});
