/**
 * The MCP server as an agent reaches it: the SDK's own Client over
 * StreamableHTTPClientTransport, to the real app on a real socket, with a
 * bearer token. One agent saves, reads its resume prompt and hands off; a
 * second acknowledges and writes on with its lease epoch; refusals are tool
 * errors worded as the HTTP problems are. The prompts are checked for what
 * they must say (the checkpoint's continuation prompt, the handoff's note,
 * the pending work) and for the token budget they were given, counted here
 * with the same o200k_base encoding; search is tried by each of its filters.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TOKENS, type TestApp, type Who } from '../support/app.js';
import { work } from '../client/support/server.js';

let t: TestApp;
let url: string;
const clients: Client[] = [];

beforeAll(async () => {
  t = await buildTestApp();
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  for (const client of clients) await client.close();
  t.app.server.closeAllConnections();
  await t.close();
});

async function connect(who: Who = 'writer'): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } } }));
  clients.push(client);
  return client;
}

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text?: string }[] };

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Result> {
  return (await client.callTool({ name, arguments: args })) as Result;
}

describe('the MCP server at POST /mcp', () => {
  it('lists the six tools with JSON Schemas and descriptions, and the resume_task prompt', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['acknowledge_handoff', 'get_latest_checkpoint', 'get_resume_prompt', 'hand_off_task', 'save_checkpoint', 'search_checkpoints']);
    const save = tools.find((tool) => tool.name === 'save_checkpoint')!;
    expect(save.description).toMatch(/continuationPrompt/);
    expect(save.inputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['taskId', 'agentId']) });
    expect(Object.keys(save.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['executionState', 'contextSummary', 'recovery', 'leaseEpoch']));
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['resume_task']);
  });

  it('saves, reads the resume prompt, hands off; a second agent acknowledges and writes with its lease epoch', async () => {
    const agentA = await connect();
    const saved = await call(agentA, 'save_checkpoint', { ...work('mcp-task', 'agent-a'), recovery: { continuationPrompt: 'Wire the parser into the CLI next.' } });
    expect(saved.isError).toBeFalsy();
    expect(saved.structuredContent).toMatchObject({ taskId: 'mcp-task', agentId: 'agent-a', version: 1, compliance: { hash: expect.stringMatching(/^[0-9a-f]{64}$/) } });

    const latest = await call(agentA, 'get_latest_checkpoint', { taskId: 'mcp-task' });
    expect(latest.structuredContent).toMatchObject({ id: saved.structuredContent!.id });
    const prompt = await call(agentA, 'get_resume_prompt', { taskId: 'mcp-task', maxTokens: 400 });
    expect(prompt.structuredContent).toMatchObject({ checkpointId: saved.structuredContent!.id, text: expect.stringContaining('write the parser') });

    const handedOff = await call(agentA, 'hand_off_task', { taskId: 'mcp-task', trigger: 'context_limit', note: 'The lexer is done; mind the escapes.' });
    expect(handedOff.isError).toBeFalsy();
    const handoffId = (handedOff.structuredContent!.handoff as { id: string }).id;
    // The next agent's prompt carries the checkpoint's own continuation prompt and the note, with who wrote it and why.
    const handoffPrompt = handedOff.structuredContent!.continuationPrompt as string;
    expect(handoffPrompt).toContain('Wire the parser into the CLI next.');
    expect(handoffPrompt).toContain('Note from agent-a, who handed off (context_limit): The lexer is done; mind the escapes.');
    expect(handoffPrompt).toContain('write the parser');

    const agentB = await connect();
    const taken = await call(agentB, 'acknowledge_handoff', { handoffId, agentId: 'agent-b' });
    expect(taken.isError).toBeFalsy();
    expect(taken.structuredContent).toMatchObject({ handoff: { status: 'acknowledged' }, checkpoint: { agentId: 'agent-b', parentId: saved.structuredContent!.id }, lease: { agentId: 'agent-b', epoch: 1 } });

    // The task is leased now: a write without the epoch is refused, with it accepted.
    const unfenced = await call(agentB, 'save_checkpoint', work('mcp-task', 'agent-b'));
    expect(unfenced).toMatchObject({ isError: true, structuredContent: { code: 'lease_required', status: 428 } });
    const fenced = await call(agentB, 'save_checkpoint', { ...work('mcp-task', 'agent-b'), leaseEpoch: 1 });
    expect(fenced.isError).toBeFalsy();

    // A second, different agent cannot take the same handoff.
    const late = await call(await connect(), 'acknowledge_handoff', { handoffId, agentId: 'agent-c' });
    expect(late).toMatchObject({ isError: true, structuredContent: { code: 'handoff_taken' } });

    const found = await call(agentA, 'search_checkpoints', { taskId: 'mcp-task' });
    expect((found.structuredContent!.items as unknown[]).length).toBe(3);
    // resume_task resumes from the newest checkpoint, agent-b's: its prompt, the same text get_resume_prompt gives.
    const resumed = await agentB.getPrompt({ name: 'resume_task', arguments: { taskId: 'mcp-task' } });
    const text = (resumed.messages[0]!.content as { type: string; text: string }).text;
    expect(resumed.messages[0]!.content.type).toBe('text');
    expect(text).toContain('Continue with the parser.');
    expect(text).toContain('write the parser');
    expect(text).not.toContain('Wire the parser into the CLI next.');
    expect(text).toBe((await call(agentB, 'get_resume_prompt', { taskId: 'mcp-task' })).structuredContent!.text);
  });

  it('fits get_resume_prompt and hand_off_task to maxTokens, counted in o200k_base tokens', async () => {
    const agent = await connect();
    const long = (n: number) => Array.from({ length: 30 }, (_, i) => `finished step ${i} of the ${n}th stage, wiring the tokenizer into the parser and its tests`);
    const saved = await call(agent, 'save_checkpoint', {
      ...work('mcp-budget', 'agent-a', { executionState: { phase: 'implementing', completedItems: long(1), pendingItems: ['write the parser'], currentFocus: 'write the parser' } }),
      recovery: { continuationPrompt: 'Resume at the escape handling of the lexer.' },
    });
    expect(saved.isError).toBeFalsy();
    const full = (await call(agent, 'get_resume_prompt', { taskId: 'mcp-budget' })).structuredContent!;
    expect(countTokens(full.text as string)).toBeGreaterThan(300);
    expect(full).toMatchObject({ budget: null, tokens: countTokens(full.text as string) });

    const fitted = (await call(agent, 'get_resume_prompt', { taskId: 'mcp-budget', maxTokens: 120 })).structuredContent!;
    expect(fitted.budget).toBe(120);
    expect(countTokens(fitted.text as string)).toBeLessThanOrEqual(120);
    expect(fitted.tokens).toBe(countTokens(fitted.text as string));
    expect((fitted.dropped as string[]).length).toBeGreaterThan(0);
    expect(fitted.text).toContain('write the parser');

    const handedOff = await call(agent, 'hand_off_task', { taskId: 'mcp-budget', trigger: 'context_limit', note: 'Mind the escapes.', maxTokens: 400 });
    expect(handedOff.isError).toBeFalsy();
    const prompt = handedOff.structuredContent!.continuationPrompt as string;
    expect(countTokens(prompt)).toBeLessThanOrEqual(400);
    expect(prompt).toContain('Mind the escapes.');
  });

  it('searches by words, agent, agent type, phase, label, file and time, and pages with limit and cursor', async () => {
    const agent = await connect();
    const save = async (taskId: string, agentId: string, extra: Record<string, unknown>) => {
      const saved = await call(agent, 'save_checkpoint', { ...work(taskId, agentId), ...extra });
      expect(saved.isError).toBeFalsy();
      return saved.structuredContent!.id as string;
    };
    const before = new Date(Date.now() - 1_000).toISOString();
    const lexer = await save('mcp-find-a', 'finder-1', {
      agentType: 'research',
      executionState: { phase: 'planning', completedItems: [{ description: 'sketched the quasar lexer', files: { created: ['src/quasar.ts'] } }], pendingItems: [] },
      labels: { team: 'compilers' },
    });
    const docs = await save('mcp-find-b', 'finder-2', { executionState: { phase: 'testing', completedItems: ['wrote the nebula guide'], pendingItems: [] }, labels: { team: 'docs' } });
    const third = await save('mcp-find-b', 'finder-2', { executionState: { phase: 'testing', completedItems: ['wrote the nebula index'], pendingItems: [] }, labels: { team: 'docs' } });
    const ids = async (args: Record<string, unknown>) => {
      const found = await call(agent, 'search_checkpoints', args);
      expect(found.isError).toBeFalsy();
      return (found.structuredContent!.items as { id: string }[]).map((item) => item.id);
    };
    expect(await ids({ q: 'quasar' })).toEqual([lexer]);
    expect(await ids({ q: 'nebula' })).toEqual([third, docs]);
    expect(await ids({ q: 'nebula guide' })).toEqual([docs]);
    expect(await ids({ agentId: 'finder-1' })).toEqual([lexer]);
    expect(await ids({ agentType: 'research' })).toEqual([lexer]);
    expect(await ids({ phase: 'testing', agentId: 'finder-2' })).toEqual([third, docs]);
    expect(await ids({ labels: { team: 'compilers' } })).toEqual([lexer]);
    expect(await ids({ file: 'src/quasar.ts' })).toEqual([lexer]);
    expect(await ids({ agentId: 'finder-2', from: before })).toEqual([third, docs]);
    expect(await ids({ agentId: 'finder-2', to: before })).toEqual([]);

    const first = await call(agent, 'search_checkpoints', { agentId: 'finder-2', limit: 1 });
    expect((first.structuredContent!.items as { id: string }[]).map((item) => item.id)).toEqual([third]);
    const cursor = first.structuredContent!.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    expect(await ids({ agentId: 'finder-2', limit: 1, cursor })).toEqual([docs]);
  });

  it('answers invalid arguments with a tool error in the HTTP problem’s words, naming every field', async () => {
    const client = await connect();
    const result = await call(client, 'save_checkpoint', { taskId: '', executionState: { phase: 'dreaming' } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'validation_failed', status: 400 });
    const fields = (result.structuredContent!.errors as { field: string }[]).map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['taskId', 'agentId', 'executionState.phase']));
    expect(result.content[0]!.text).toMatch(/^validation_failed: The request is invalid; correct the fields listed/);
    expect((await call(client, 'get_resume_prompt', {})).structuredContent).toMatchObject({ code: 'validation_failed' });
  });

  it('keeps roles and tenants: an auditor reads but cannot save; another tenant sees nothing', async () => {
    await call(await connect(), 'save_checkpoint', work('mcp-tenant', 'agent-a'));
    const auditor = await connect('auditor');
    expect((await call(auditor, 'get_latest_checkpoint', { taskId: 'mcp-tenant' })).isError).toBeFalsy();
    expect(await call(auditor, 'save_checkpoint', work('mcp-tenant', 'auditor'))).toMatchObject({ isError: true, structuredContent: { code: 'forbidden' } });
    expect(await call(await connect('acmeWriter'), 'get_latest_checkpoint', { taskId: 'mcp-tenant' })).toMatchObject({ isError: true, structuredContent: { code: 'not_found' } });
  });

  it('refuses a request without a token, and GET /mcp, as problems', async () => {
    const client = new Client({ name: 'no-token', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)))).rejects.toThrow(/401|nauthorized/);
    const bare = await fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(bare.status).toBe(401);
    expect(await bare.json()).toMatchObject({ code: 'unauthorized' });
    const get = await fetch(`${url}/mcp`, { headers: { authorization: `Bearer ${TOKENS.writer}` } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});
