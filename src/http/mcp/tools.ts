/**
 * The Model Context Protocol tools and prompt of Baton: what a coding agent
 * calls to keep its own work. Each tool is a thin door onto the same service
 * functions and commands as the HTTP routes (`service/commands.ts` begins
 * every command), under the caller's token: its tenant, its role, and leases
 * with fencing (the tool takes `leaseEpoch` where the route takes
 * `Baton-Lease-Epoch`). Arguments are validated by the tools themselves, so
 * a refusal reads as the HTTP API's problem does: the same code, sentence and
 * field errors. `docs/mcp.md` is the user's guide.
 *
 * @module
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { checkpointId, checkpointInput, externalId } from '../../domain/checkpoint.js';
import type { Actor, CommandBase } from '../../domain/commands.js';
import { handoffBody, successorBody } from '../../domain/requests.js';
import { AppError, ERRORS, type FieldError } from '../../errors.js';
import { getCheckpoint, latestCheckpoint } from '../../service/checkpoint-reads.js';
import { commandBase } from '../../service/commands.js';
import type { ServiceContext } from '../../service/context.js';
import { execute } from '../../service/execute.js';
import { handoffPrompt } from '../../service/handoff.js';
import { newId } from '../../domain/ids.js';
import { MAX_PROMPT_BUDGET, resumePrompt } from '../../service/resume-prompt.js';
import { searchCheckpoints, type SearchQuery } from '../../service/search.js';
import { submit } from '../../service/submit.js';
import { searchQuery } from '../schemas.js';

export const MCP_SERVER_NAME = 'baton';

const leaseEpoch = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe('Your lease epoch on this task (from acknowledge_handoff or a lease). While the task has a live lease, every write must carry the holder’s epoch.');
const maxTokens = z.number().int().min(1).max(MAX_PROMPT_BUDGET).optional().describe('Fit the prompt to this many tokens (o200k_base); the problem, intent, decisions, current state and next actions are kept.');

const schemas = {
  save_checkpoint: checkpointInput.extend({ leaseEpoch }),
  get_latest_checkpoint: z.strictObject({ taskId: externalId.describe('The task whose newest checkpoint that verifies you want.') }),
  get_resume_prompt: z.strictObject({
    taskId: externalId.optional().describe('The task: its newest checkpoint’s prompt. Give taskId or checkpointId.'),
    checkpointId: checkpointId.optional().describe('A checkpoint’s own prompt. Give taskId or checkpointId.'),
    maxTokens,
  }),
  hand_off_task: handoffBody.extend({
    taskId: externalId.optional().describe('Hand off the task’s newest checkpoint. Give taskId or checkpointId.'),
    checkpointId: checkpointId.optional().describe('The checkpoint to finalize as the handoff point. Give taskId or checkpointId.'),
    maxTokens,
    leaseEpoch,
  }),
  acknowledge_handoff: successorBody.extend({ handoffId: z.uuid({ message: 'must be a UUID' }).describe('The handoff you were given (hand_off_task answers it).') }),
  search_checkpoints: searchQuery.omit({ cursor: true, limit: true }).extend({
    labels: z.record(z.string(), z.string()).optional().describe('Labels the checkpoints must carry, NAME: VALUE.'),
    limit: z.number().int().min(1).max(100).default(20),
    cursor: z.string().max(2000).optional(),
  }),
};

const descriptions: Record<keyof typeof schemas, string> = {
  save_checkpoint:
    'Save a checkpoint of your work on a task: what is done (executionState.completedItems), what is pending (pendingItems), what blocks you, the decisions you made and why (contextSummary.keyDecisions), the files you touched, and a continuationPrompt for whoever resumes. Call it after each meaningful step and before your context runs out. Answers the stored checkpoint with its id, version and hash.',
  get_latest_checkpoint: 'Read the newest checkpoint of a task whose hash verifies (corrupt ones are skipped and reported). Use it to see where the work stands before you continue it.',
  get_resume_prompt:
    'Get the prompt to resume a task from: the problem, the intent, the decisions, the current state and the next actions, written from its newest checkpoint (or a given one), fitted to maxTokens when given. Read it first when you take over a task.',
  hand_off_task:
    'Hand your task to a fresh agent when your context is nearly full, your phase is complete, errors pile up, or you are told to. Finalizes the checkpoint as the handoff point and answers the handoff id and the resume prompt the next agent needs (your note is inside it).',
  acknowledge_handoff:
    'Take over a task someone handed off: creates your first checkpoint (the previous state carried forward) and gives you the task’s lease. Keep the lease epoch from the answer and pass it as leaseEpoch with every later save_checkpoint. Only one agent can take a handoff.',
  search_checkpoints: 'Search checkpoints by task, agent, agent type, phase, status, final status, labels, a file path they touched, a time range, or words (q: every word must appear in items and decisions). Newest first, paged with cursor.',
};

/** A tool's answer: the JSON as text, and as structured content. */
function answer(value: unknown) {
  const data = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  return { content: [{ type: 'text' as const, text: JSON.stringify(data, null, 2) }], structuredContent: data };
}

/** A refusal, worded as the HTTP API words its problem. */
function refusal(error: unknown) {
  const problem: { code: string; status: number; detail: string; errors?: FieldError[] } =
    error instanceof AppError
      ? { ...(error.extra ?? {}), code: error.code, status: error.status, detail: error.detail ? `${ERRORS[error.code].message} ${error.detail}` : ERRORS[error.code].message, ...(error.errors ? { errors: error.errors } : {}) }
      : { code: 'internal_error', status: 500, detail: ERRORS.internal_error.message };
  const fields = problem.errors?.map((e) => `${e.field}: ${e.message}`).join('; ');
  return { content: [{ type: 'text' as const, text: `${problem.code}: ${problem.detail}${fields ? ` (${fields})` : ''}` }], structuredContent: problem as Record<string, unknown>, isError: true };
}

function parse<S extends z.ZodType>(schema: S, args: unknown): z.infer<S> {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const errors: FieldError[] = parsed.error.issues.map((issue) => ({ field: issue.path.join('.') || 'arguments', message: issue.message }));
  throw new AppError('validation_failed', { errors });
}

const WRITERS: ReadonlySet<Actor['role']> = new Set(['writer', 'admin']);

/** The MCP server of one request, acting as `actor` on `ctx`. */
export function mcpServer(ctx: ServiceContext, actor: Actor): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version: '1.0.0' }, { capabilities: { tools: {}, prompts: {} } });
  // The SDK would refuse invalid arguments in its own words; each tool parses them with the same schema instead,
  // so the refusal carries the HTTP problem's code, sentence and field errors.
  (server as unknown as { validateToolInput: (tool: unknown, args: unknown) => Promise<unknown> }).validateToolInput = async (_tool, args) => args;
  const begin = (epoch: number | undefined): CommandBase => commandBase(ctx, { actor, ...(epoch !== undefined ? { leaseEpoch: epoch } : {}) });
  const writer = (): void => {
    if (!WRITERS.has(actor.role)) throw new AppError('forbidden', { detail: 'Saving, handing off and acknowledging need a writer token.' });
  };
  const checkpointOfTask = async (taskId: string | undefined, id: string | undefined): Promise<string> => {
    if (id !== undefined) return id;
    if (taskId === undefined) throw new AppError('validation_failed', { errors: [{ field: 'taskId', message: 'give taskId or checkpointId' }] });
    return (await latestCheckpoint(ctx, actor, taskId)).checkpoint.checkpoint.id;
  };

  const tool = <K extends keyof typeof schemas>(name: K, run: (args: z.infer<(typeof schemas)[K]>) => Promise<unknown>): void => {
    const schema: z.ZodType = schemas[name];
    const call = async (args: unknown) => {
      try {
        return answer(await run(parse(schema, args) as z.infer<(typeof schemas)[K]>));
      } catch (error) {
        if (!(error instanceof AppError)) ctx.log.error({ err: error, tool: name }, 'an MCP tool failed');
        return refusal(error);
      }
    };
    server.registerTool(name, { description: descriptions[name], inputSchema: schema }, call as never);
  };

  tool('save_checkpoint', async ({ leaseEpoch: epoch, ...input }) => {
    writer();
    const written = await submit(ctx, { ...begin(epoch), kind: 'checkpoint.create', taskId: input.taskId, checkpointId: newId(), input });
    return 'queued' in written ? written : written.doc.checkpoint;
  });

  tool('get_latest_checkpoint', async ({ taskId }) => {
    const { checkpoint, skipped } = await latestCheckpoint(ctx, actor, taskId);
    return { ...checkpoint.checkpoint, ...(skipped.length > 0 ? { corruptedSkipped: skipped } : {}) };
  });

  tool('get_resume_prompt', async ({ taskId, checkpointId: id, maxTokens: budget }) => {
    const doc = await getCheckpoint(ctx, actor, await checkpointOfTask(taskId, id));
    const prompt = resumePrompt(doc.checkpoint, budget);
    return { checkpointId: doc.checkpoint.id, version: doc.version, ...prompt };
  });

  tool('hand_off_task', async ({ taskId, checkpointId: id, leaseEpoch: epoch, maxTokens: budget, ...options }) => {
    writer();
    const started = await submit(ctx, { ...begin(epoch), kind: 'handoff.start', checkpointId: await checkpointOfTask(taskId, id), handoffId: newId(), ...options });
    if ('queued' in started) return started;
    return { handoff: started.handoff, checkpointId: started.checkpoint.checkpoint.id, continuationPrompt: budget === undefined ? started.continuationPrompt : handoffPrompt(started.checkpoint.checkpoint, started.handoff, budget) };
  });

  tool('acknowledge_handoff', async ({ handoffId, ...successor }) => {
    writer();
    const acknowledged = await execute(ctx, { ...begin(undefined), kind: 'handoff.ack', handoffId, checkpointId: newId(), leaseId: newId(), ...successor });
    return { handoff: acknowledged.handoff, checkpoint: acknowledged.checkpoint.checkpoint, lease: acknowledged.lease, resumePrompt: resumePrompt(acknowledged.checkpoint.checkpoint).text };
  });

  tool('search_checkpoints', async ({ labels, from, to, ...filters }) => {
    const query: SearchQuery = { ...filters };
    if (labels !== undefined && Object.keys(labels).length > 0) query.labels = labels;
    // Stored times are UTC with milliseconds; compare like with like.
    if (from !== undefined) query.from = new Date(from).toISOString();
    if (to !== undefined) query.to = new Date(to).toISOString();
    const page = await searchCheckpoints(ctx, actor, query);
    return { items: page.items.map((doc) => doc.checkpoint), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });

  server.registerPrompt(
    'resume_task',
    { description: 'Resume a task from its newest checkpoint: the prompt to continue the work where it stopped.', argsSchema: { taskId: z.string().describe('The task to resume.') } },
    async ({ taskId }) => {
      const { checkpoint } = await latestCheckpoint(ctx, actor, parse(externalId, taskId));
      return { description: `Resume task ${taskId}`, messages: [{ role: 'user', content: { type: 'text', text: resumePrompt(checkpoint.checkpoint).text } }] };
    },
  );
  return server;
}
