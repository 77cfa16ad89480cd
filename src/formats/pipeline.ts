/**
 * The `pipeline` format: a `.pipeline/checkpoint-{storyId}.json` written by a
 * pipeline worker. The story is the task; stage, tasks and agent map onto the
 * checkpoint; scores and verdict become searchable `pipeline.*` labels; the
 * rest is kept in `extensions.pipeline`. `docs/formats.md` has the field table.
 *
 * @module
 */
import { z } from 'zod';
import type { Checkpoint, CheckpointInput } from '../domain/checkpoint.js';
import type { ImportFormat, ParseOptions } from './format.js';
import { assign, finishInput, pruneEmpty, resolveTaskId, UNKNOWN_AGENT } from './input.js';
import { itemText, type Item } from './items.js';
import { JsonFields, parseJson, type JsonObject } from './json.js';

const FORMAT = 'pipeline';
const read = new JsonFields(FORMAT);

type Phase = NonNullable<Checkpoint['executionState']['phase']>;

/** Stage 0 plans, 1 validates the plan, 2 implements, 3 is the quality gate. */
const STAGE_PHASE: readonly Phase[] = ['planning', 'planning', 'implementing', 'reviewing'];
const PHASE_STAGE: Partial<Record<Phase, number>> = { planning: 0, implementing: 2, testing: 3, reviewing: 3, complete: 3 };

/** Scores and verdicts are what one searches checkpoints by, so they become labels. */
const LABELS = [
  ['planScore', 'pipeline.planScore', 'number'],
  ['readiness', 'pipeline.readiness', 'number'],
  ['verdict', 'pipeline.verdict', 'string'],
  ['qualityScore', 'pipeline.qualityScore', 'number'],
] as const;
const MAPPED: readonly string[] = ['storyId', 'agentId', 'tasksCompleted', 'tasksRemaining', ...LABELS.map(([key]) => key)];
/** Fields the schema requires at every stage; export writes them even when the checkpoint has nothing for them. */
const REQUIRED = ['storyId', 'agentId', 'tasksCompleted', 'tasksRemaining'];
const TEXT_FIELDS = ['lastAction', 'timestamp', 'reason', 'issues'];
/** The schema's order, which export follows. */
const ORDER = ['storyId', 'stage', 'agentId', 'tasksCompleted', 'tasksRemaining', 'lastAction', 'timestamp', 'planScore', 'readiness', 'verdict', 'reason', 'qualityScore', 'issues'];

const residue = z.object({
  /** Fields without a place of their own (stage, lastAction, timestamp, reason, issues, unknown keys), as written. */
  fields: z.record(z.string(), z.unknown()),
  /** Required fields the document did not have, so export does not add them. */
  absent: z.array(z.string()).optional(),
});
type Residue = z.infer<typeof residue>;

export const pipeline: ImportFormat = {
  name: FORMAT,
  mediaType: 'application/json',
  parse,
  render,
};

function parse(text: string, options: ParseOptions): CheckpointInput {
  const doc = read.object(parseJson(FORMAT, text), 'document');
  const storyId = Object.hasOwn(doc, 'storyId') ? read.string(doc.storyId, 'storyId') : undefined;
  const state: NonNullable<CheckpointInput['executionState']> = {};
  const labels: NonNullable<CheckpointInput['labels']> = {};
  if (Object.hasOwn(doc, 'stage')) {
    const stage = read.number(doc.stage, 'stage');
    state.phase = STAGE_PHASE[stage] ?? read.fail('stage', 'an integer from 0 to 3');
  }
  const agentId = Object.hasOwn(doc, 'agentId') ? read.string(doc.agentId, 'agentId') : undefined;
  if (Object.hasOwn(doc, 'tasksCompleted')) state.completedItems = read.strings(doc.tasksCompleted, 'tasksCompleted');
  if (Object.hasOwn(doc, 'tasksRemaining')) state.pendingItems = read.strings(doc.tasksRemaining, 'tasksRemaining');
  for (const key of TEXT_FIELDS) if (Object.hasOwn(doc, key)) read.string(doc[key], key);
  for (const [key, label, type] of LABELS) {
    if (Object.hasOwn(doc, key)) labels[label] = type === 'number' ? read.number(doc[key], key) : read.string(doc[key], key);
  }
  const fields: JsonObject = {};
  for (const [key, value] of Object.entries(doc)) if (!MAPPED.includes(key)) fields[key] = value;
  const extension: Residue = { fields };
  const absent = REQUIRED.filter((key) => !Object.hasOwn(doc, key));
  if (absent.length > 0) extension.absent = absent;
  const input: CheckpointInput = {
    taskId: resolveTaskId(FORMAT, options, storyId === undefined ? undefined : { value: storyId, field: 'storyId' }),
    agentId: agentId ?? options.agentId ?? UNKNOWN_AGENT,
    executionState: state,
    labels,
    extensions: { [FORMAT]: extension },
  };
  const origins: Record<string, string> = { taskId: 'storyId', agentId: 'agentId' };
  for (const [key, label] of LABELS) origins[`labels.${label}`] = key;
  return finishInput(FORMAT, pruneEmpty(input), origins);
}

function render(checkpoint: Checkpoint): string {
  return `${JSON.stringify(pipelineDocument(checkpoint), null, 2)}\n`;
}

/** The pipeline checkpoint object for `checkpoint`; the resume block is written from it too. */
export function pipelineDocument(checkpoint: Checkpoint): JsonObject {
  const parsed = residue.safeParse(checkpoint.extensions[FORMAT]);
  const kept = parsed.success ? parsed.data : undefined;
  const absent = new Set(kept?.absent ?? []);
  const state = checkpoint.executionState;
  const computed: JsonObject = {};
  if (!absent.has('storyId')) computed.storyId = checkpoint.taskId;
  assign(computed, 'stage', stageFor(state.phase, kept?.fields.stage));
  if (!absent.has('agentId')) computed.agentId = checkpoint.agentId;
  assign(computed, 'tasksCompleted', taskList(state.completedItems, absent.has('tasksCompleted')));
  assign(computed, 'tasksRemaining', taskList(state.pendingItems, absent.has('tasksRemaining')));
  for (const [key, label, type] of LABELS) {
    const value = checkpoint.labels[label];
    if (typeof value === type) computed[key] = value;
  }
  if (kept === undefined) {
    const last = state.completedItems?.at(-1);
    assign(computed, 'lastAction', last === undefined ? undefined : itemText(last));
    computed.timestamp = checkpoint.updatedAt;
  }
  const fields = kept?.fields ?? {};
  const out: JsonObject = {};
  for (const key of ORDER) {
    if (Object.hasOwn(computed, key)) out[key] = computed[key];
    else if (key !== 'stage' && !MAPPED.includes(key) && Object.hasOwn(fields, key)) out[key] = fields[key];
  }
  for (const [key, value] of Object.entries(fields)) if (!Object.hasOwn(out, key) && !MAPPED.includes(key) && key !== 'stage') out[key] = value;
  return out;
}

/** The kept stage while it still agrees with the phase (a handoff keeps the stage it left), else the phase's stage. */
function stageFor(phase: Phase | undefined, kept: unknown): number | undefined {
  if (typeof kept === 'number' && Number.isInteger(kept) && STAGE_PHASE[kept] !== undefined) {
    if (phase === 'handoff' || STAGE_PHASE[kept] === phase) return kept;
  }
  return phase === undefined ? undefined : PHASE_STAGE[phase];
}

/** A pipeline lists task ids; an item that has an id gives that, any other its text. */
function taskList(items: Item[] | undefined, wasAbsent: boolean): string[] | undefined {
  if (items === undefined) return wasAbsent ? undefined : [];
  return items.map((entry) => (typeof entry === 'string' ? entry : (entry.id ?? entry.description)));
}
