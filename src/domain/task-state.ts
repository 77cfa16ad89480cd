/**
 * A task's state, in the words agent protocols already use (A2A and MCP
 * Tasks: working, input-required, auth-required, completed, failed,
 * canceled) plus Baton's own handing-off and blocked. Only `completed` is
 * success; paused states are never finished; a state this code does not know
 * is neither.
 *
 * @module
 */
import type { FinalStatus } from './checkpoint.js';

export const TASK_STATES = ['working', 'input-required', 'auth-required', 'completed', 'failed', 'canceled', 'handing-off', 'blocked'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** The states a client may set directly; handing-off and blocked come only from the protocol. */
export const SETTABLE_STATES = ['working', 'input-required', 'auth-required', 'completed', 'failed', 'canceled'] as const;
export type SettableState = (typeof SETTABLE_STATES)[number];

const FINISHED: ReadonlySet<string> = new Set(['completed', 'failed', 'canceled']);
const PAUSED: ReadonlySet<string> = new Set(['input-required', 'auth-required']);

/** True only for `completed`: an unknown state is never read as success. */
export function isSuccess(state: string): boolean {
  return state === 'completed';
}

/** True for completed, failed and canceled; paused and unknown states are not finished. */
export function isFinished(state: string): boolean {
  return FINISHED.has(state);
}

/** True for input-required and auth-required: waiting for someone, not finished. */
export function isPaused(state: string): boolean {
  return PAUSED.has(state);
}

/** The task's state once a checkpoint is finalized with `status`. */
export function stateAfterFinalize(status: FinalStatus): TaskState {
  switch (status) {
    case 'completed':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'abandoned':
      return 'canceled';
    case 'handoff':
      return 'handing-off';
  }
}
