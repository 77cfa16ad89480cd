/**
 * examples/langgraph run as a user runs it: against a real server on a real
 * socket, the graph started in one process, interrupted for approval, and
 * resumed in another that has nothing of the first in memory.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS } from '../support/app.js';
import { listen, type Listening } from '../client/support/server.js';

const run = promisify(execFile);
let server: Listening;

beforeAll(async () => {
  server = await listen();
});
afterAll(async () => {
  await server.close();
});

async function example(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/langgraph/run.ts', ...args], {
    env: { ...process.env, BATON_URL: server.url, BATON_TOKEN: TOKENS.writer },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

describe('examples/langgraph', () => {
  it('stops at the interrupt, resumes in a new process, and its history is in the audit trail', async () => {
    const started = await example('start', 'release-42');
    expect(started.next).toEqual(['review']);
    expect(started.interrupts).toEqual([{ question: 'Publish this note?', draft: 'Release note: leases for LangGraph threads.' }]);

    const resumed = await example('resume', 'release-42', 'approve');
    expect(resumed.log).toEqual(['drafted', 'reviewed: approve', 'published']);
    // Newest first: the input, then one loop step per node, each a checkpoint of the thread.
    expect((resumed.history as string[]).at(-1)).toBe('input:-1');
    expect((resumed.history as string[])[0]).toBe('loop:3');
    const audit = resumed.audit as string[];
    expect(audit.filter((a) => a === 'checkpoint.created')).toHaveLength((resumed.history as string[]).length);
    expect(audit).toContain('checkpoint.updated');
    expect(resumed.auditVerified).toBe(true);
  }, 120_000);
});
