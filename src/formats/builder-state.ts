/**
 * The `builder-state` format: the `checkpoint` object of a builder-state.json
 * (phase, completedSteps, pendingSteps, currentStep, decisions, blockers,
 * verification, metadata), on its own or inside the whole file. Fields with
 * a place in the checkpoint go there; the rest is kept in
 * `extensions['builder-state']` so that export gives the document back.
 * `docs/formats.md` has the field table.
 *
 * @module
 */
import { z } from 'zod';
import type { Checkpoint, CheckpointInput } from '../domain/checkpoint.js';
import type { ImportFormat, ParseOptions } from './format.js';
import { assign, finishInput, pruneEmpty, resolveTaskId, UNKNOWN_AGENT } from './input.js';
import { itemText, otherKeys, type Decision, type Item } from './items.js';
import { isObject, JsonFields, parseJson, pathTo, type JsonObject } from './json.js';

const FORMAT = 'builder-state';
const read = new JsonFields(FORMAT);

type Phase = NonNullable<NonNullable<CheckpointInput['executionState']>['phase']>;

/** The schema's four phases, plus Baton's two that it lacks, so every exported phase reads back. */
const PHASE_IN = new Map<string, Phase>([
  ['planning', 'planning'],
  ['implementation', 'implementing'],
  ['verification', 'testing'],
  ['documentation', 'reviewing'],
  ['complete', 'complete'],
  ['handoff', 'handoff'],
]);
const PHASE_OUT = new Map<Phase, string>([...PHASE_IN].map(([name, phase]) => [phase, name]));

/** Keys of the checkpoint object whose values live in the checkpoint's own fields. */
const MAPPED = ['phase', 'completedSteps', 'pendingSteps', 'decisions', 'blockers'];
const CHECKPOINT_KEYS = [...MAPPED, 'currentStep', 'verification', 'metadata'];
const STEP_KEYS = ['step', 'filesCreated', 'filesModified', 'filesDeleted', 'timestamp'];
const DECISION_KEYS = ['decision', 'rationale', 'timestamp'];

/** What `extensions['builder-state']` holds; checked again on export, since a patch may have changed it. */
const residue = z.object({
  /** Fields of the checkpoint object kept as written: verification, metadata, a current step with more than its description, unknown keys. */
  fields: z.record(z.string(), z.unknown()),
  /** The rest of a whole builder-state.json, with `null` where the checkpoint object sits (`at`). */
  file: z.object({ document: z.record(z.string(), z.unknown()), at: z.array(z.union([z.string(), z.number().int().min(0)])).min(1) }).optional(),
});
type Residue = z.infer<typeof residue>;

export const builderState: ImportFormat = {
  name: FORMAT,
  mediaType: 'application/json',
  parse,
  render,
};

function parse(text: string, options: ParseOptions): CheckpointInput {
  const root = read.object(parseJson(FORMAT, text), 'document');
  const { checkpoint, at } = locate(root);
  const base = at?.join('.') ?? '';
  const field = (key: string) => pathTo(base, key);
  const kept: JsonObject = {};
  const state: NonNullable<CheckpointInput['executionState']> = {};
  const summary: NonNullable<CheckpointInput['contextSummary']> = {};
  let createdBy: string | undefined;

  if (Object.hasOwn(checkpoint, 'phase')) {
    const phase = PHASE_IN.get(read.string(checkpoint.phase, field('phase')));
    state.phase = phase ?? read.fail(field('phase'), 'one of planning, implementation, verification, documentation, complete, handoff');
  }
  if (Object.hasOwn(checkpoint, 'completedSteps')) {
    state.completedItems = read.array(checkpoint.completedSteps, field('completedSteps')).map((step, i) => stepToItem(step, pathTo(field('completedSteps'), i)));
  }
  if (Object.hasOwn(checkpoint, 'pendingSteps')) state.pendingItems = read.strings(checkpoint.pendingSteps, field('pendingSteps'));
  if (Object.hasOwn(checkpoint, 'currentStep')) {
    const step = checkpoint.currentStep;
    if (step === null) state.currentFocus = null;
    else {
      const current = read.object(step, field('currentStep'));
      if (Object.hasOwn(current, 'description')) state.currentFocus = read.string(current.description, field('currentStep.description'));
      // A step with more than its description is kept whole, so its partial work is exported only with that step.
      if (Object.keys(current).some((key) => key !== 'description') || !Object.hasOwn(current, 'description')) kept.currentStep = current;
    }
  }
  if (Object.hasOwn(checkpoint, 'decisions')) {
    summary.keyDecisions = read.array(checkpoint.decisions, field('decisions')).map((entry, i) => decisionFrom(entry, pathTo(field('decisions'), i)));
  }
  if (Object.hasOwn(checkpoint, 'blockers')) state.blockedItems = read.strings(checkpoint.blockers, field('blockers'));
  if (Object.hasOwn(checkpoint, 'verification') && checkpoint.verification !== null) read.object(checkpoint.verification, field('verification'));
  if (Object.hasOwn(checkpoint, 'metadata')) {
    const metadata = read.object(checkpoint.metadata, field('metadata'));
    if (Object.hasOwn(metadata, 'createdBy')) createdBy = read.string(metadata.createdBy, field('metadata.createdBy'));
  }
  for (const [key, value] of Object.entries(checkpoint)) if (!MAPPED.includes(key) && key !== 'currentStep') kept[key] = value;

  const extension: Residue = { fields: kept };
  if (at !== undefined) extension.file = { document: withCheckpointRemoved(root, at), at };
  const input: CheckpointInput = {
    taskId: resolveTaskId(FORMAT, options),
    agentId: createdBy ?? options.agentId ?? UNKNOWN_AGENT,
    executionState: state,
    contextSummary: summary,
    extensions: { [FORMAT]: extension },
  };
  return finishInput(FORMAT, pruneEmpty(input), {
    agentId: field('metadata.createdBy'),
    'executionState.completedItems': field('completedSteps'),
    'executionState.pendingItems': field('pendingSteps'),
    'executionState.blockedItems': field('blockers'),
    'executionState.currentFocus': field('currentStep.description'),
    'contextSummary.keyDecisions': field('decisions'),
  });
}

/** Where the checkpoint object is: the document itself, or inside a whole builder-state.json. */
function locate(root: JsonObject): { checkpoint: JsonObject; at?: Array<string | number> } {
  if (CHECKPOINT_KEYS.some((key) => Object.hasOwn(root, key))) return { checkpoint: root };
  const active = root.activePrd;
  if (isObject(active) && Object.hasOwn(active, 'checkpoint')) {
    return { checkpoint: read.object(active.checkpoint, 'activePrd.checkpoint'), at: ['activePrd', 'checkpoint'] };
  }
  if (Array.isArray(root.adhocQueue)) {
    const index = root.adhocQueue.findIndex((entry) => isObject(entry) && isObject(entry.checkpoint));
    if (index >= 0) return { checkpoint: (root.adhocQueue[index] as JsonObject).checkpoint as JsonObject, at: ['adhocQueue', index, 'checkpoint'] };
  }
  if (Object.hasOwn(root, 'activePrd') || Object.hasOwn(root, 'adhocQueue') || Object.hasOwn(root, 'sessionId')) {
    read.fail('activePrd.checkpoint', 'a checkpoint object in activePrd.checkpoint or adhocQueue[].checkpoint');
  }
  return { checkpoint: root };
}

function withCheckpointRemoved(root: JsonObject, at: Array<string | number>): JsonObject {
  const copy = structuredClone(root);
  const parent = at.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], copy) as Record<string | number, unknown>;
  parent[at[at.length - 1]!] = null;
  return copy;
}

function stepToItem(value: unknown, field: string): Item {
  const step = read.object(value, field);
  const description = read.string(step.step, pathTo(field, 'step'));
  for (const reserved of ['description', 'files', 'at']) {
    if (Object.hasOwn(step, reserved)) read.fail(pathTo(field, reserved), 'no such key: a step is described by step, filesCreated, filesModified, filesDeleted and timestamp');
  }
  const files: Record<string, unknown[]> = {};
  for (const [key, name] of [['filesCreated', 'created'], ['filesModified', 'modified'], ['filesDeleted', 'deleted']] as const) {
    if (Object.hasOwn(step, key)) files[name] = read.array(step[key], pathTo(field, key));
  }
  const at = Object.hasOwn(step, 'timestamp') ? read.timestamp(step.timestamp, pathTo(field, 'timestamp')) : undefined;
  const rest = otherKeys(step, STEP_KEYS);
  if (Object.keys(files).length === 0 && at === undefined && Object.keys(rest).length === 0) return description;
  const item: Record<string, unknown> = { description };
  if (Object.keys(files).length > 0) item.files = files;
  assign(item, 'at', at);
  return { ...item, ...rest } as Item;
}

function itemToStep(entry: Item): JsonObject {
  if (typeof entry === 'string') return { step: entry };
  const step: JsonObject = { step: entry.description };
  assign(step, 'filesCreated', entry.files?.created);
  assign(step, 'filesModified', entry.files?.modified);
  assign(step, 'filesDeleted', entry.files?.deleted);
  assign(step, 'timestamp', entry.at);
  for (const [key, value] of Object.entries(otherKeys(entry, ['description', 'files', 'at']))) if (!STEP_KEYS.includes(key)) step[key] = value;
  return step;
}

function decisionFrom(value: unknown, field: string): Decision {
  const entry = read.object(value, field);
  const decision = read.string(entry.decision, pathTo(field, 'decision'));
  if (Object.hasOwn(entry, 'at')) read.fail(pathTo(field, 'at'), 'no such key: a decision is described by decision, rationale and timestamp');
  const rationale = Object.hasOwn(entry, 'rationale') ? read.string(entry.rationale, pathTo(field, 'rationale')) : undefined;
  const at = Object.hasOwn(entry, 'timestamp') ? read.timestamp(entry.timestamp, pathTo(field, 'timestamp')) : undefined;
  const rest = otherKeys(entry, DECISION_KEYS);
  if (rationale === undefined && at === undefined && Object.keys(rest).length === 0) return decision;
  const result: Record<string, unknown> = { decision };
  assign(result, 'rationale', rationale);
  assign(result, 'at', at);
  return { ...result, ...rest } as Decision;
}

function decisionTo(entry: Decision): JsonObject {
  if (typeof entry === 'string') return { decision: entry };
  const result: JsonObject = { decision: entry.decision };
  assign(result, 'rationale', entry.rationale);
  assign(result, 'timestamp', entry.at);
  for (const [key, value] of Object.entries(otherKeys(entry, ['decision', 'rationale', 'at']))) if (!DECISION_KEYS.includes(key)) result[key] = value;
  return result;
}

function blockerText(entry: Item): string {
  return typeof entry !== 'string' && entry.blocker !== undefined ? `${entry.description}: ${entry.blocker}` : itemText(entry);
}

function render(checkpoint: Checkpoint): string {
  const parsed = residue.safeParse(checkpoint.extensions[FORMAT]);
  const kept = parsed.success ? parsed.data : undefined;
  const object = checkpointObject(checkpoint, kept);
  const file = kept?.file;
  return `${JSON.stringify(file === undefined ? object : placeInFile(file, object), null, 2)}\n`;
}

/** The checkpoint object: the checkpoint's own fields first, then what was kept as written. */
function checkpointObject(checkpoint: Checkpoint, kept: Residue | undefined): JsonObject {
  const state = checkpoint.executionState;
  const out: JsonObject = {};
  assign(out, 'phase', state.phase === undefined ? undefined : PHASE_OUT.get(state.phase));
  assign(out, 'completedSteps', state.completedItems?.map(itemToStep));
  assign(out, 'pendingSteps', state.pendingItems?.map(itemText));
  assign(out, 'currentStep', currentStep(state.currentFocus, kept?.fields.currentStep));
  assign(out, 'decisions', checkpoint.contextSummary.keyDecisions?.map(decisionTo));
  assign(out, 'blockers', state.blockedItems?.map(blockerText));
  if (kept === undefined) {
    out.metadata = { createdBy: checkpoint.agentId, lastUpdatedAt: checkpoint.updatedAt };
    return out;
  }
  for (const [key, value] of Object.entries(kept.fields)) {
    if (MAPPED.includes(key) || key === 'currentStep') continue;
    // The agent may have changed since import; the checkpoint's agentId is the one to export.
    out[key] = key === 'metadata' && isObject(value) && Object.hasOwn(value, 'createdBy') ? { ...value, createdBy: checkpoint.agentId } : value;
  }
  return out;
}

/** The kept current step while it still describes the checkpoint's focus, else one built from the focus. */
function currentStep(focus: string | null | undefined, kept: unknown): unknown {
  if (focus === null) return null;
  const keptStep = isObject(kept) ? kept : undefined;
  if (keptStep !== undefined && keptStep.description === focus) return keptStep;
  return focus === undefined ? undefined : { description: focus };
}

function placeInFile(file: NonNullable<Residue['file']>, object: JsonObject): JsonObject {
  const copy = structuredClone(file.document);
  let node: unknown = copy;
  for (const key of file.at.slice(0, -1)) node = isObject(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[key] : undefined;
  if (!isObject(node) && !Array.isArray(node)) return object;
  (node as Record<string | number, unknown>)[file.at[file.at.length - 1]!] = object;
  return copy;
}
