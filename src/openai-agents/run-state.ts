/**
 * `saveRunState` / `loadRunState`: an OpenAI Agents run's `RunState` (a run
 * paused for tool approvals, or one to carry on after a crash) kept as a
 * checkpoint of a Baton task, so that another process, or another agent
 * after a handoff of the task, resumes it from Baton alone. Each save is a
 * new checkpoint linked to the one before: the task's history is the run's
 * history, each state hashed and audited, and the newest that verifies is
 * the one loaded.
 *
 * @module
 */
import { RunState, type RunContext } from '@openai/agents-core';
import type { BatonClient, CallOptions } from '../client/index.js';
import type { Checkpoint, CheckpointInput } from '../client/types.js';
import { EXTENSION, KIND, LABEL, runStateOf, type RunStateRecord } from './record.js';

export interface SaveRunStateOptions extends CallOptions {
  /** The Baton agent id the checkpoint is written as (default `openai-agents`). */
  agentId?: string;
  /** Passed to `RunState.toJSON`: tracing API keys are left out unless this is true. */
  includeTracingApiKey?: boolean;
}

/** Any agent the SDK can resume a run with, as `RunState.fromString` takes it. */
export type RootAgent = Parameters<typeof RunState.fromString>[0];

/** What saving reads of a run state; every `RunState` has it, whatever its context and agent types. */
export type SavableRunState = Pick<RunState<unknown, never>, 'toJSON' | 'getInterruptions'> & { readonly currentAgent: { readonly name: string } | undefined };

export interface LoadRunStateOptions<TContext> extends CallOptions {
  /** A fresh context for the resumed run (`RunState.fromStringWithContext`). */
  context?: RunContext<TContext>;
  /** How `context` and the saved context combine (default `merge`). */
  contextStrategy?: 'merge' | 'replace';
}

/**
 * Saves `state` as the newest run-state checkpoint of task `taskId` (for a
 * run with a `BatonSession`, the session id). Its pending tool approvals
 * become the checkpoint's blocked items and its continuation prompt, so a
 * person or agent reading the task sees what it waits for.
 */
export async function saveRunState(client: BatonClient, taskId: string, state: SavableRunState, options: SaveRunStateOptions = {}): Promise<Checkpoint> {
  const { agentId = 'openai-agents', includeTracingApiKey, ...call } = options;
  const previous = await newest(client, taskId, call);
  const json = state.toJSON(includeTracingApiKey ? { includeTracingApiKey } : undefined);
  const agent = state.currentAgent?.name ?? 'agent';
  const approvals = state.getInterruptions().map((item) => ({
    ...(item.rawItem.type === 'function_call' ? { id: item.rawItem.callId } : {}),
    description: `Approve ${item.name ?? item.rawItem.type}${item.arguments ? ` with ${item.arguments}` : ''}`,
    blocker: 'waiting for a tool approval',
  }));
  const finished = (json as { currentStep?: { type?: string } }).currentStep?.type === 'next_step_final_output';
  const tokens = (json as { context?: { usage?: { totalTokens?: number } } }).context?.usage?.totalTokens;
  const record: RunStateRecord = { kind: KIND.runState, state: json };
  const input: CheckpointInput = {
    taskId,
    agentId,
    ...(previous !== undefined ? { parentId: previous.id } : {}),
    executionState: {
      phase: finished ? 'complete' : 'implementing',
      blockedItems: approvals,
      currentFocus: approvals.length > 0 ? `${agent} waits for ${approvals.length} tool approval(s)` : `${agent} runs`,
    },
    ...(typeof tokens === 'number' ? { metrics: { tokensConsumed: tokens } } : {}),
    recovery: {
      ...(previous !== undefined ? { lastSuccessfulState: previous.id } : {}),
      continuationPrompt: continuation(taskId, agent, approvals.length),
    },
    labels: { [LABEL.kind]: KIND.runState, [LABEL.agent]: agent.slice(0, 1000), [LABEL.interruptions]: approvals.length },
    extensions: { [EXTENSION]: record },
  };
  return client.checkpoints.create(input, call);
}

/**
 * The newest run state saved to task `taskId`, deserialized against
 * `agent` (the root of the same agent graph the run started with), or
 * undefined when the task holds none. Baton verifies the checkpoint's hash
 * before answering; a corrupt newer one is passed over for the one before.
 */
export async function loadRunState<TContext, TAgent extends RootAgent>(
  client: BatonClient,
  agent: TAgent,
  taskId: string,
  options: LoadRunStateOptions<TContext> = {},
): Promise<RunState<TContext, TAgent> | undefined> {
  const { context, contextStrategy, ...call } = options;
  const doc = await newest(client, taskId, call);
  if (doc === undefined) return undefined;
  const text = JSON.stringify(runStateOf(doc)!.state);
  if (context !== undefined) return RunState.fromStringWithContext<TContext, TAgent>(agent, text, context, contextStrategy ? { contextStrategy } : undefined);
  return RunState.fromString<TContext, TAgent>(agent, text);
}

/** The task's newest run-state checkpoint (search answers newest first and passes over corrupt ones). */
async function newest(client: BatonClient, taskId: string, call: CallOptions): Promise<Checkpoint | undefined> {
  const page = await client.checkpoints.search({ taskId, labels: { [LABEL.kind]: KIND.runState }, limit: 1 }, call.signal ? { signal: call.signal } : undefined);
  return page.items.find((doc) => runStateOf(doc) !== undefined);
}

function continuation(taskId: string, agent: string, approvals: number): string {
  const waiting = approvals > 0 ? ` It waits for ${approvals} tool approval(s): approve or reject each of state.getInterruptions() before running it again.` : '';
  return `An OpenAI Agents run with ${agent}. Resume it with loadRunState(client, rootAgent, ${JSON.stringify(taskId)}) and run(rootAgent, state, { session }).${waiting}`;
}
