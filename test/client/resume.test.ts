/**
 * What a resuming agent asks of a checkpoint, through the client over a real
 * socket: the resume prompt as JSON (text, tokens, budget, what gave way) and
 * a stale-check of the files it is about to touch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, work, type Listening } from './support/server.js';

describe('resume prompt and stale-check, through the client', () => {
  let server: Listening;

  beforeAll(async () => {
    server = await listen();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers the whole prompt, and a fitted one when given a budget', async () => {
    const client = server.client();
    const made = await client.checkpoints.create(work('resume-task', 'agent-1', { recovery: {} }));
    const whole = await client.checkpoints.resumePrompt(made.id);
    expect(whole).toMatchObject({ checkpointId: made.id, version: 1, budget: null, dropped: [] });
    expect(whole.text).toContain('write the parser');
    expect(whole.tokens).toBeGreaterThan(0);

    const fitted = await client.checkpoints.resumePrompt(made.id, { maxTokens: 40 });
    expect(fitted.budget).toBe(40);
    expect(fitted.tokens).toBeLessThan(whole.tokens);
    await expect(client.checkpoints.resumePrompt(made.id, { maxTokens: 0 })).rejects.toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('says which reported files changed after the checkpoint, one verdict per file in order', async () => {
    const client = server.client();
    const made = await client.checkpoints.create(work('stale-task', 'agent-1', { metrics: { filesModified: [{ path: 'src/parser.ts', sha256: 'a'.repeat(64) }] } }));
    const report = await client.checkpoints.staleCheck(made.id, [
      { path: 'src/parser.ts', sha256: 'b'.repeat(64) },
      { path: './src//parser.ts', sha256: 'a'.repeat(64) },
    ]);
    expect(report).toMatchObject({ checkpointId: made.id, checkpointVersion: 1, stale: true });
    expect(report.files.map((f) => [f.path, f.status, f.reason])).toEqual([
      ['src/parser.ts', 'changed', 'sha256'],
      ['./src//parser.ts', 'unchanged', 'sha256'],
    ]);
  });
});
