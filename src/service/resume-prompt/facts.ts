/**
 * What a resume prompt says, read from a checkpoint: its core fields, and
 * what the format converters keep in `extensions` (the markdown sections
 * without a field of their own, the builder-state current step,
 * verification and metadata, the pipeline's last action and verdict, the
 * workflow-xml tree). Extensions are read defensively: a merge patch may
 * have put anything there, and a prompt must never fail because of it.
 *
 * @module
 */
import type { Checkpoint } from '../../domain/checkpoint.js';
import { tame } from './tokens.js';

export interface Decision {
  text: string;
  why?: string;
}

/** The parts of a resume prompt, each entry tamed, trimmed and non-empty. */
export interface Facts {
  taskId: string;
  intro: string;
  phase?: string;
  problem: string[];
  intent: string[];
  decisions: Decision[];
  rules: string[];
  context: string[];
  breadcrumbs: string[];
  /** Oldest first, as recorded. */
  completed: string[];
  files: string[];
  state: string[];
  focus?: string;
  /** What the focus is: a step in progress, or (from a markdown checkpoint) the Current State section. */
  focusLabel: string;
  partial?: string;
  next: string[];
  verification: string[];
  recovery: string[];
  note?: string;
}

type Obj = Record<string, unknown>;
const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
const obj = (value: unknown): Obj => (isObj(value) ? value : {});
const str = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
const scalar = (value: unknown): string | undefined =>
  typeof value === 'number' || typeof value === 'boolean' ? String(value) : str(value);

function clean(text: string): string {
  return tame(text).trim();
}

function texts(values: Array<string | undefined>): string[] {
  return values.filter((v): v is string => v !== undefined).map(clean).filter((v) => v !== '');
}

type Item = NonNullable<Checkpoint['executionState']['completedItems']>[number];

function itemText(entry: Item): string {
  if (typeof entry === 'string') return entry;
  const head = entry.id !== undefined && entry.id !== entry.description ? `${entry.id}: ${entry.description}` : entry.description;
  return entry.blocker !== undefined ? `${head} — blocked: ${entry.blocker}` : head;
}

/** The markdown sections kept as written, by their title in lower case. */
function markdownSections(extensions: Obj): Array<{ title: string; text: string }> {
  const sections = obj(extensions.markdown).sections;
  if (!Array.isArray(sections)) return [];
  return sections.flatMap((section) => {
    const heading = str(obj(section).heading);
    const text = str(obj(section).text);
    if (heading === undefined || text === undefined) return [];
    return [{ title: heading.replace(/^\s*#+\s*/, '').replace(/\s+#+\s*$/, '').trim(), text }];
  });
}

const key = (title: string) => title.toLowerCase().replace(/[^a-z0-9:]/g, '');

/** The text of every element of a workflow-xml tree, as `path: text`, except the slots the checkpoint's fields fill. */
function xmlTexts(nodes: unknown, path: string[], out: Array<{ path: string[]; text: string }>, depth = 0): void {
  if (!Array.isArray(nodes) || depth > 64) return;
  for (const node of nodes) {
    const element = str(obj(node).element);
    if (element === undefined) continue;
    const children = obj(node).children;
    const text = Array.isArray(children) ? children.map((child) => str(obj(child).text) ?? '').join('').trim() : '';
    const attributes = obj(node).attributes;
    const named = Array.isArray(attributes) ? attributes.filter(Array.isArray).map((a) => `${String(a[0])}=${String(a[1])}`).join(', ') : '';
    if (text !== '') out.push({ path: [...path, element], text: named === '' ? text : `${text} (${named})` });
    xmlTexts(children, [...path, element], out, depth + 1);
  }
}

type State = Checkpoint['executionState'];

function openItems(state: State): Item[] {
  return [...(state.pendingItems ?? []), ...(state.blockedItems ?? [])];
}

function introOf(checkpoint: Checkpoint, builder: Obj): string {
  const metadata = obj(builder.metadata);
  const previous = Array.isArray(metadata.previousAgents) ? metadata.previousAgents.filter((a): a is string => typeof a === 'string') : [];
  const who = checkpoint.agentType === undefined ? checkpoint.agentId : `${checkpoint.agentId} (${checkpoint.agentType})`;
  const parts = [
    `You are continuing work that agent ${who} checkpointed at ${checkpoint.updatedAt} (checkpoint ${checkpoint.id}, version ${checkpoint.version}, iteration ${checkpoint.iteration}).`,
  ];
  if (previous.length > 0) parts.push(`Agents before it: ${previous.join(', ')}.`);
  if (str(metadata.reason) !== undefined) parts.push(`Checkpoint reason: ${String(metadata.reason)}.`);
  return clean(parts.join(' '));
}

/** One line per path the work touched, with its last recorded change; the last recorded come last. */
function filesToReview(state: State, metrics: Checkpoint['metrics']): string[] {
  const files = new Map<string, string>();
  const note = (ref: unknown, change: string) => {
    const path = typeof ref === 'string' ? ref : str(obj(ref).path);
    if (path === undefined) return;
    const extra = obj(ref);
    const keyChange = str(extra.keyChange);
    files.delete(path);
    files.set(path, `\`${path}\` — ${str(extra.status) ?? change}${keyChange === undefined ? '' : `: ${keyChange}`}`);
  };
  for (const entry of [...(state.completedItems ?? []), ...openItems(state)]) {
    if (typeof entry === 'string') continue;
    for (const change of ['created', 'modified', 'deleted'] as const) for (const ref of entry.files?.[change] ?? []) note(ref, change);
  }
  for (const ref of metrics.filesModified ?? []) note(ref, 'modified');
  return [...files.values()];
}

function testsLine(tests: Checkpoint['metrics']['testsStatus']): string | undefined {
  if (tests === undefined) return undefined;
  const parts = [
    tests.passed === undefined ? undefined : `${tests.passed} passed`,
    tests.failed === undefined ? undefined : `${tests.failed} failed`,
    tests.skipped === undefined ? undefined : `${tests.skipped} skipped`,
    tests.coveragePercent === undefined ? undefined : `coverage ${tests.coveragePercent}%`,
  ].filter(Boolean);
  return parts.length === 0 ? undefined : `Tests: ${parts.join(', ')}.`;
}

/** What success looks like: the builder-state contract and results, the pipeline's scores and verdict. */
function verificationLines(builder: Obj, pipeline: Obj, labels: Obj): Array<string | undefined> {
  const verification = obj(builder.verification);
  const results = Array.isArray(verification.results) ? verification.results : [];
  return [
    str(verification.contractRef) === undefined ? undefined : `Contract: ${String(verification.contractRef)}`,
    ...results.map((r) => [scalar(obj(r).activity), scalar(obj(r).status), scalar(obj(r).runAt)].filter(Boolean).join(' — ')),
    ...['verdict', 'qualityScore', 'planScore', 'readiness'].map((name) => {
      const value = scalar(labels[`pipeline.${name}`]);
      return value === undefined ? undefined : `${name}: ${value}`;
    }),
    str(pipeline.reason) === undefined ? undefined : `Reason: ${String(pipeline.reason)}`,
    str(pipeline.issues) === undefined ? undefined : `Issues: ${String(pipeline.issues)}`,
  ];
}

export function factsOf(checkpoint: Checkpoint): Facts {
  const state = checkpoint.executionState ?? {};
  const summary = checkpoint.contextSummary ?? {};
  const metrics = checkpoint.metrics ?? {};
  const recovery = checkpoint.recovery ?? {};
  const extensions = obj(checkpoint.extensions);
  const builder = obj(obj(extensions['builder-state']).fields);
  const pipeline = obj(obj(extensions.pipeline).fields);
  const labels = obj(checkpoint.labels);
  const sections = markdownSections(extensions);
  const section = (name: string) => sections.filter((s) => key(s.title) === key(name)).map((s) => s.text);
  const known = new Set(['problem', 'sessionintent', 'essentialinformation', 'technicalcontext', 'breadcrumbs', 'completion'].map(key));

  const xml: Array<{ path: string[]; text: string }> = [];
  xmlTexts(obj(extensions['workflow-xml']).nodes, [], xml);
  const mission = xml.filter((x) => x.path.at(-1) === 'mission').map((x) => x.text);

  // The current step: the focus names an item by id or by text, or is text of its own.
  const open = openItems(state);
  const focusRaw = str(state.currentFocus);
  const focusItem = focusRaw === undefined ? undefined : open.find((i) => (typeof i === 'string' ? i === focusRaw : i.id === focusRaw || i.description === focusRaw));
  const currentStep = obj(builder.currentStep);
  const partial =
    str(focusItem !== undefined && typeof focusItem !== 'string' ? (focusItem as Obj).partialWork : undefined) ??
    (str(currentStep.description) === undefined || currentStep.description === focusRaw ? str(currentStep.partialWork) : undefined);

  const deltas = sections.filter((s) => key(s.title).startsWith('delta:')).map((s) => `${s.title}: ${s.text.trim().split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'))[0] ?? ''}`);
  const others = sections.filter((s) => !known.has(key(s.title)) && !key(s.title).startsWith('delta:')).map((s) => `${s.title}: ${s.text}`);
  // Deltas are sessions of completed work too, so the count agrees with the completed list.
  const done = (state.completedItems?.length ?? 0) + deltas.length;
  const pendingCount = state.pendingItems?.length ?? 0;
  const finalLine = checkpoint.status === 'finalized' ? `Checkpoint finalized${checkpoint.finalStatus ? ` (${checkpoint.finalStatus})` : ''}.` : undefined;

  const markdownFocus = Array.isArray(obj(extensions.markdown).sections) && (obj(extensions.markdown).sections as unknown[]).some((s) => obj(s).field === 'currentFocus');
  const facts: Facts = {
    taskId: clean(checkpoint.taskId),
    focusLabel: markdownFocus ? 'Current state' : 'Current step (in progress)',
    intro: introOf(checkpoint, builder),
    problem: texts([...section('Problem'), ...mission]),
    intent: texts(section('Session Intent')),
    decisions: (summary.keyDecisions ?? []).flatMap((d) => {
      const text = clean(typeof d === 'string' ? d : d.decision);
      const why = typeof d === 'string' || d.rationale === undefined ? '' : clean(d.rationale);
      return text === '' ? [] : [why === '' ? { text } : { text, why }];
    }),
    rules: texts((summary.constraints ?? []).map(itemText)),
    context: texts([
      ...section('Technical Context'),
      ...(summary.assumptions ?? []).map((a) => `Assumption: ${itemText(a)}`),
      ...(summary.externalDependencies ?? []).map((d) => `Depends on: ${itemText(d)}`),
      ...others,
      ...xml.filter((x) => x.path.at(-1) !== 'mission' && x.path.length > 1).map((x) => `${x.path.slice(1).join(' › ')}: ${x.text}`),
    ]),
    breadcrumbs: texts(section('Breadcrumbs')),
    completed: texts([...(state.completedItems ?? []).map(itemText), ...deltas]),
    files: texts(filesToReview(state, metrics)),
    state: texts([
      finalLine,
      `Progress: ${done} step${done === 1 ? '' : 's'} done, ${pendingCount} pending.`,
      str(pipeline.lastAction) === undefined ? undefined : `Last action: ${String(pipeline.lastAction)}`,
      ...(state.blockedItems ?? []).map((b) => `Blocked: ${itemText(b)}`),
      testsLine(metrics.testsStatus),
      ...section('Completion').map((c) => `Completion: ${c}`),
    ]),
    next: texts((state.pendingItems ?? []).filter((i) => i !== focusItem).map(itemText)),
    verification: texts(verificationLines(builder, pipeline, labels)),
    recovery: texts([
      str(recovery.lastSuccessfulState) === undefined ? undefined : `Last known good state: ${recovery.lastSuccessfulState}`,
      str(recovery.rollbackInstructions) === undefined ? undefined : `Rollback: ${recovery.rollbackInstructions}`,
    ]),
  };
  if (state.phase !== undefined) facts.phase = state.phase;
  const focus = focusItem === undefined ? focusRaw : itemText(focusItem);
  if (focus !== undefined && clean(focus) !== '') facts.focus = clean(focus);
  if (partial !== undefined && clean(partial) !== '') facts.partial = clean(partial);
  const continuation = str(recovery.continuationPrompt);
  if (continuation !== undefined && clean(continuation) !== '') facts.note = clean(continuation);
  return facts;
}
