/**
 * The resume prompt as markdown blocks, rendered from the facts of a
 * checkpoint under a plan that says how much of each part to show. Every
 * block starts with a character that is not whitespace and ends with a
 * newline, so the tokens of the prompt are the sum of its blocks' tokens
 * (see `TokenCounter.total`).
 *
 * @module
 */
import type { Facts } from './facts.js';

/** How much of each part a rendering shows. */
export interface Plan {
  /** Completed steps listed one by one, the most recent; the older ones are summarised in one line. */
  completed: number;
  /** Files to review listed, the most recently recorded; the others are counted in one line. */
  files: number;
  breadcrumbs: boolean;
  context: boolean;
  recovery: boolean;
  /** Tokens of the previous agent's continuation note; 0 leaves it out. */
  note: number;
  verification: boolean;
  rules: boolean;
  /** The introduction and the instructions shortened to the one instruction not to redo finished work. */
  brief: boolean;
  rationale: boolean;
  /** Tokens of each entry of the never-dropped parts. */
  entryTokens: number;
  /** Entries listed per never-dropped list. */
  listed: number;
}

export const FULL: Plan = {
  completed: Infinity,
  files: Infinity,
  breadcrumbs: true,
  context: true,
  recovery: true,
  note: Infinity,
  verification: true,
  rules: true,
  brief: false,
  rationale: true,
  entryTokens: Infinity,
  listed: Infinity,
};

/** Cuts text to at most the given tokens (the caller memoizes it). */
export type Cut = (text: string, tokens: number) => string;

const DO_NOT_REDO = '**Do not redo completed work, and keep the decisions already made.**';

function bullet(text: string): string {
  return `- ${text.replaceAll('\n', '\n  ')}`;
}

function numbered(text: string, index: number): string {
  return `${index + 1}. ${text.replaceAll('\n', '\n   ')}`;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Markdown blocks of the prompt under `plan`. */
export function renderBlocks(f: Facts, plan: Plan, cut: Cut): string[] {
  const blocks: string[] = [];
  const fit = (text: string) => (plan.entryTokens === Infinity ? text : cut(text, plan.entryTokens));
  // Paragraphs are separated by a blank line, list entries are not; a blank line closes each section.
  const section = (title: string, lines: string[], paragraphs = false) => {
    if (lines.length === 0) return;
    blocks.push(`## ${title}\n`);
    lines.forEach((line, i) => blocks.push(`${line}\n${paragraphs || i === lines.length - 1 ? '\n' : ''}`));
  };
  const first = <T>(list: T[]) => (plan.listed === Infinity ? list : list.slice(0, plan.listed));
  const last = <T>(list: T[]) => (plan.listed === Infinity ? list : list.slice(Math.max(0, list.length - plan.listed)));

  blocks.push(`# Resuming task: ${fit(f.taskId)}\n\n`);
  if (!plan.brief) blocks.push(`${f.intro}\n\n`);
  blocks.push(`${DO_NOT_REDO}\n\n`);

  section('Problem', first(f.problem).map(fit), true);
  section('Session intent', first(f.intent).map(fit), true);

  const decisions = last(f.decisions).map((d) => bullet(plan.rationale && d.why !== undefined ? `${fit(d.text)} — why: ${fit(d.why)}` : fit(d.text)));
  const hidden = f.decisions.length - last(f.decisions).length;
  if (hidden > 0) decisions.unshift(bullet(`… and ${plural(hidden, 'earlier decision', 'earlier decisions')}, which still hold.`));
  section('Decisions already made (do not revisit)', decisions);

  if (plan.rules) section('Rules and constraints', f.rules.map(bullet));
  if (plan.context) section('Technical context', f.context.map(bullet));
  if (plan.breadcrumbs) section('Breadcrumbs', f.breadcrumbs, true);

  const shown = plan.completed >= f.completed.length ? f.completed : f.completed.slice(f.completed.length - plan.completed);
  const summarised = f.completed.length - shown.length;
  const done = shown.map(bullet);
  if (summarised > 0) {
    done.unshift(bullet(shown.length === 0 ? `${plural(summarised, 'step', 'steps')} done.` : `… and ${plural(summarised, 'earlier step', 'earlier steps')} done.`));
  }
  section('Completed work (do not redo)', done);
  const files = f.files.slice(Math.max(0, f.files.length - plan.files)).map(bullet);
  if (files.length > 0 && files.length < f.files.length) files.unshift(bullet(`… and ${plural(f.files.length - files.length, 'earlier file', 'earlier files')}.`));
  section('Files to review (read them to confirm the checkpoint still holds)', files);

  const state: string[] = [];
  if (f.phase !== undefined) state.push(bullet(`Phase: ${f.phase}.`));
  if (f.focus !== undefined) state.push(bullet(`${f.focusLabel}: ${fit(f.focus)}`));
  if (f.partial !== undefined) state.push(bullet(`Partial work: ${fit(f.partial)}`));
  const stateLines = first(f.state);
  state.push(...stateLines.map((line) => bullet(fit(line))));
  if (stateLines.length < f.state.length) state.push(bullet(`… and ${f.state.length - stateLines.length} more.`));
  section('Current state', state);

  const next = first(f.next).map((entry, i) => numbered(fit(entry), i));
  if (next.length < f.next.length) next.push(bullet(`… and ${f.next.length - next.length} more.`));
  if (f.next.length === 0) next.push(f.focus === undefined ? 'Nothing is pending: check the work against the verification criteria.' : 'Finish the current step; nothing else is pending.');
  section('Next actions', next);

  if (plan.verification) section('Verification criteria', f.verification.map(bullet));
  if (plan.recovery) section('Recovery', f.recovery.map(bullet));
  if (f.note !== undefined && plan.note > 0) {
    const note = plan.note === Infinity ? f.note : cut(f.note, plan.note);
    if (note !== '') section('Note from the previous agent', [note]);
  }
  if (!plan.brief) {
    section('Instructions', [
      '1. Do not redo completed work, and do not revisit the decisions already made.',
      '2. Read the files to review to confirm the checkpoint still holds (`POST /v1/checkpoints/{id}/stale-check` names the files changed since).',
      '3. Continue from the current step, or from the first next action when no step is in progress.',
      '4. Finish the remaining steps, then check the work against the verification criteria.',
    ]);
  }
  // The prompt ends with one newline, not with the blank line that closes a section.
  const end = blocks.length - 1;
  if (blocks[end]!.endsWith('\n\n')) blocks[end] = blocks[end]!.slice(0, -1);
  return blocks;
}

/** What `plan` summarised or left out of the parts this checkpoint has, in the order they give way. */
export function droppedBy(f: Facts, plan: Plan, noteTokens: number, longest: number, longestList: number): string[] {
  const out: string[] = [];
  const add = (when: boolean, name: string) => {
    if (when) out.push(name);
  };
  add(plan.completed < f.completed.length, 'completed-steps');
  add(plan.files < f.files.length, 'artifact-trail');
  add(!plan.breadcrumbs && f.breadcrumbs.length > 0, 'breadcrumbs');
  add(!plan.context && f.context.length > 0, 'technical-context');
  add(!plan.recovery && f.recovery.length > 0, 'recovery');
  add(f.note !== undefined && plan.note < noteTokens, 'continuation-note');
  add(!plan.verification && f.verification.length > 0, 'verification');
  add(!plan.rules && f.rules.length > 0, 'rules');
  add(plan.brief, 'instructions');
  add(!plan.rationale && f.decisions.some((d) => d.why !== undefined), 'decision-rationale');
  add(plan.entryTokens < longest, 'long-entries');
  add(plan.listed < longestList, 'long-lists');
  return out;
}

/**
 * The never-dropped parts in their shortest form, one line each, the current
 * step and next action first. Each line comes with its variants, richest
 * first; the fitting takes the first that fits whole, else cuts the last.
 */
export function oneLineForm(f: Facts): string[][] {
  const flat = (text: string) => text.replace(/\s+/g, ' ');
  const lines: string[][] = [];
  if (f.focus !== undefined) {
    const now = `Now: ${flat(f.focus)}`;
    lines.push(f.partial === undefined ? [now] : [`${now} (partial work: ${flat(f.partial)})`, now]);
  }
  if (f.next.length > 0) {
    const next = `Next: ${flat(f.next[0]!)}`;
    lines.push(f.next.length > 1 ? [`${next} (+${f.next.length - 1} more)`, next] : [next]);
  } else if (f.focus === undefined) lines.push(['Next: nothing is pending; check the work against its verification criteria.', 'Next: nothing is pending.']);
  const task = `Task ${flat(f.taskId)}${f.phase === undefined ? '' : `, phase ${f.phase}`}`;
  lines.push([`${task}: do not redo the ${plural(f.completed.length, 'completed step', 'completed steps')}.`, `${task}: do not redo finished work.`]);
  if (f.problem.length > 0) lines.push([`Problem: ${flat(f.problem.join(' '))}`]);
  if (f.intent.length > 0) lines.push([`Intent: ${flat(f.intent.join(' '))}`]);
  if (f.decisions.length > 0) lines.push([`Decisions: ${flat(f.decisions.map((d) => d.text).join('; '))}`]);
  return lines;
}
