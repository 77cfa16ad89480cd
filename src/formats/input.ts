/**
 * The last steps every parser shares: which task and agent the checkpoint
 * belongs to, and validation of the result against the checkpoint schema so
 * that an import never yields an input the service would refuse.
 *
 * @module
 */
import { checkpointInput, type CheckpointInput } from '../domain/checkpoint.js';
import { FormatError } from './errors.js';
import type { ParseOptions } from './format.js';

/** The agent recorded when neither the document nor the importer names one. */
export const UNKNOWN_AGENT = 'unknown';

/**
 * The task id: the document's own when it carries one (which must then agree
 * with the importer's), else the importer's; without either there is no task.
 */
export function resolveTaskId(format: string, options: ParseOptions, fromDocument?: { value: string; field: string }): string {
  if (fromDocument !== undefined) {
    if (options.taskId !== undefined && options.taskId !== fromDocument.value) {
      throw new FormatError({ format, field: 'taskId', expected: `the task the document names in ${fromDocument.field}, or no taskId at all` });
    }
    return fromDocument.value;
  }
  if (options.taskId === undefined) {
    throw new FormatError({ format, field: 'taskId', expected: 'a taskId given with the import, because this format does not name its task' });
  }
  return options.taskId;
}

/** Validates a parsed checkpoint; `origins` renames input paths to the document's own fields in errors. */
export function finishInput(format: string, draft: CheckpointInput, origins: Record<string, string> = {}): CheckpointInput {
  const parsed = checkpointInput.safeParse(draft);
  if (parsed.success) return draft;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String).join('.');
  const origin = Object.keys(origins)
    .filter((prefix) => path === prefix || path.startsWith(`${prefix}.`))
    .sort((a, b) => b.length - a.length)[0];
  const field = origin === undefined ? path || 'document' : `${origins[origin]}${path.slice(origin.length)}`;
  throw new FormatError({ format, field, expected: `a value the checkpoint accepts (${issue.message})` });
}

/** Sets `target[key]` only when `value` is defined, so converted objects carry no undefined keys. */
export function assign<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

/** Drops the sections of an input that stayed empty, so a parse result has no `{}` placeholders. */
export function pruneEmpty(input: CheckpointInput): CheckpointInput {
  for (const key of ['executionState', 'contextSummary', 'metrics', 'recovery', 'labels'] as const) {
    const section = input[key];
    if (section !== undefined && Object.keys(section).length === 0) delete input[key];
  }
  return input;
}
