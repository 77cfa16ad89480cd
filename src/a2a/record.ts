/**
 * How an A2A task sits in a Baton checkpoint (docs/a2a.md): the labels that
 * scope and find it, the task itself as the SDK's ProtoJSON, and the page
 * tokens of a listing, in the SDK's own form.
 *
 * @module
 */
import { A2A_PROTOCOL_VERSION, Task, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { Checkpoint, CheckpointInput, TaskStateRequest } from '../client/types.js';

/** The extension the task is kept under. */
export const EXTENSION = 'a2a';

export const LABEL = {
  kind: 'a2a.kind',
  /** Tenant and owner together: one label that finds exactly one caller's tasks. */
  scope: 'a2a.scope',
  /** The A2A task id (the Baton task id may carry a prefix). */
  id: 'a2a.id',
  context: 'a2a.context',
  state: 'a2a.state',
  /** Milliseconds since the epoch of the status timestamp; 0 when the task has none. */
  updated: 'a2a.updated',
  /** The A2A protocol version the task was written in, as the SDK's database store records it. */
  protocol: 'a2a.protocol',
} as const;

export interface TaskRecord {
  /**
   * `Task.toJSON(task)` as text. A JSON Merge Patch cannot write a null, and a
   * task's metadata may hold one: as text, a save replaces the task exactly.
   */
  task: string;
}

export interface Scope {
  tenant: string;
  owner: string;
}

/** The scope label's value: never empty, and tenants or owners differing only in case stay apart. */
export async function scopeLabel(scope: Scope): Promise<string> {
  const text = JSON.stringify([scope.tenant, scope.owner]);
  if (text.length <= 1_000) return text;
  // Label values are at most 1,000 characters: a longer scope is known by its hash.
  return `sha256:${await sha256(text)}`;
}

export async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The status time a listing orders by: 0 when absent or unreadable, as the SDK's database store does. */
export function statusTime(task: Pick<Task, 'status'>): number {
  const timestamp = task.status?.timestamp;
  if (!timestamp) return 0;
  const parsed = Date.parse(timestamp);
  return Number.isNaN(parsed) ? 0 : parsed;
}

/** The checkpoint body of a save: the task, and what a person reading Baton wants to see of it. */
export function checkpointOf(taskId: string, agentId: string, scope: string, task: Task): CheckpointInput {
  const state = task.status === undefined ? undefined : taskStateToJSON(task.status.state);
  const said = task.status?.message?.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join(' ').trim();
  return {
    taskId,
    agentId,
    executionState: {
      phase: batonState(task) === 'completed' || batonState(task) === 'failed' || batonState(task) === 'canceled' ? 'complete' : 'implementing',
      ...(said ? { currentFocus: said.slice(0, 2_000) } : {}),
    },
    labels: {
      [LABEL.kind]: 'task',
      [LABEL.scope]: scope,
      [LABEL.id]: task.id.slice(0, 1_000),
      [LABEL.context]: task.contextId.slice(0, 1_000),
      ...(state !== undefined ? { [LABEL.state]: state } : {}),
      [LABEL.updated]: statusTime(task),
      [LABEL.protocol]: A2A_PROTOCOL_VERSION,
    },
    extensions: { [EXTENSION]: { task: JSON.stringify(Task.toJSON(task)) } satisfies TaskRecord },
  };
}

/** A fresh task from its checkpoint: the SDK mutates what a store returns, so every load makes a new one. */
export function taskOf(doc: Checkpoint): Task {
  const record = (doc.extensions as Record<string, unknown>)[EXTENSION] as TaskRecord | undefined;
  if (typeof record?.task !== 'string') throw new Error(`checkpoint ${doc.id} holds no A2A task`);
  return Task.fromJSON(JSON.parse(record.task));
}

/**
 * The Baton task state an A2A state is (Baton's states are A2A's words):
 * submitted is working, rejected is failed; an unspecified state has none.
 */
export function batonState(task: Pick<Task, 'status'>): TaskStateRequest['state'] | undefined {
  switch (task.status?.state) {
    case TaskState.TASK_STATE_SUBMITTED:
    case TaskState.TASK_STATE_WORKING:
      return 'working';
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return 'input-required';
    case TaskState.TASK_STATE_AUTH_REQUIRED:
      return 'auth-required';
    case TaskState.TASK_STATE_COMPLETED:
      return 'completed';
    case TaskState.TASK_STATE_FAILED:
    case TaskState.TASK_STATE_REJECTED:
      return 'failed';
    case TaskState.TASK_STATE_CANCELED:
      return 'canceled';
    default:
      return undefined;
  }
}

/** The SDK's page token: base64 of `<status timestamp>|<task id>` (the timestamp empty for a task without one). */
export function encodePageToken(time: number, id: string): string {
  const bytes = new TextEncoder().encode(`${time === 0 ? '' : new Date(time).toISOString()}|${id}`);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export function decodePageToken(token: string): { time: number; id: string } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(token), (ch) => ch.charCodeAt(0)));
  } catch {
    throw new RequestMalformedError('Token is not a valid base64-encoded cursor.');
  }
  const bar = text.indexOf('|');
  if (bar < 0) throw new RequestMalformedError('Invalid page token format.');
  return { time: statusTime({ status: { state: TaskState.TASK_STATE_UNSPECIFIED, message: undefined, timestamp: text.slice(0, bar) } }), id: text.slice(bar + 1) };
}
