/**
 * What the SDK's own tests import from its sources that its package does not
 * export: `TERMINAL_STATE_LIST` of its src/server/utils.ts, spelled out.
 */
import { TaskState } from '@a2a-js/sdk';

export const TERMINAL_STATE_LIST = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED];
