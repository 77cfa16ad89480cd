/**
 * Which elements of each workflow-xml document hold values the checkpoint
 * has fields for, and how an element becomes a list entry and back. Every
 * other element, attribute and comment stays in the stored tree as written.
 *
 * @module
 */
import type { Checkpoint } from '../../domain/checkpoint.js';
import type { XmlElement } from './xml-tree.js';

export type TextField = 'phase' | 'currentFocus' | 'continuationPrompt';
export type ListField = 'keyDecisions' | 'filesModified' | 'pendingItems' | 'completedItems';

/** A text element holding one value, or a container whose `child` elements are the entries of a list. */
export type Slot = { kind: 'text'; path: readonly string[]; field: TextField } | { kind: 'list'; path: readonly string[]; child: string; field: ListField };

/** Slots per root element, in document order; export creates missing ones in this order. */
export const ROOT_SLOTS = new Map<string, readonly Slot[]>([
  [
    'workflow_checkpoint',
    [
      { kind: 'text', path: ['workflow_state', 'next_stage'], field: 'phase' },
      { kind: 'list', path: ['context_snapshot', 'critical_decisions'], child: 'decision', field: 'keyDecisions' },
      { kind: 'list', path: ['context_snapshot', 'implementation_artifacts'], child: 'artifact', field: 'filesModified' },
      { kind: 'list', path: ['context_snapshot', 'quality_status'], child: 'remaining_tasks', field: 'pendingItems' },
      { kind: 'text', path: ['resume_instructions', 'next_step'], field: 'currentFocus' },
      { kind: 'text', path: ['resume_instructions', 'required_context'], field: 'continuationPrompt' },
    ],
  ],
  ['approval_checkpoint', []],
  [
    'error_checkpoint',
    [
      { kind: 'list', path: ['error_context'], child: 'partial_completion', field: 'completedItems' },
      { kind: 'list', path: ['resume_plan'], child: 'recovery_steps', field: 'pendingItems' },
      { kind: 'text', path: ['resume_plan', 'continuation_point'], field: 'currentFocus' },
    ],
  ],
]);

type Phase = NonNullable<Checkpoint['executionState']['phase']>;

/** `next_stage` names the phase being entered; Baton's phases without a stage name keep their own. */
export const NEXT_STAGE_PHASE = new Map<string, Phase>([
  ['mission_planning', 'planning'],
  ['implementation', 'implementing'],
  ['verification', 'testing'],
  ['reviewing', 'reviewing'],
  ['complete', 'complete'],
  ['handoff', 'handoff'],
]);
const PHASE_NEXT_STAGE = new Map<Phase, string>([...NEXT_STAGE_PHASE].map(([stage, phase]) => [phase, stage]));

/** The entry key an element's text becomes; its attributes become the entry's other keys. */
export const TEXT_KEY: Record<ListField, string> = { keyDecisions: 'decision', filesModified: 'path', pendingItems: 'description', completedItems: 'description' };

export function textOf(checkpoint: Checkpoint, field: TextField): string | undefined {
  if (field === 'phase') return checkpoint.executionState.phase === undefined ? undefined : PHASE_NEXT_STAGE.get(checkpoint.executionState.phase);
  if (field === 'currentFocus') return checkpoint.executionState.currentFocus ?? undefined;
  return checkpoint.recovery.continuationPrompt ?? undefined;
}

export function listOf(checkpoint: Checkpoint, field: ListField): unknown[] | undefined {
  if (field === 'keyDecisions') return checkpoint.contextSummary.keyDecisions;
  if (field === 'filesModified') return checkpoint.metrics.filesModified;
  return checkpoint.executionState[field];
}

/** An entry from an element: its text alone, or an object with the text under TEXT_KEY and the attributes beside it. */
export function entryFrom(field: ListField, text: string, attributes: Array<[string, string]> | undefined): unknown {
  if (attributes === undefined) return text;
  return { [TEXT_KEY[field]]: text, ...Object.fromEntries(attributes) };
}

/** The element for an entry; keys whose values are not scalars have no place in an attribute and are left out. */
export function elementFrom(field: ListField, child: string, entry: unknown): XmlElement {
  if (typeof entry !== 'object' || entry === null) return { element: child, children: [{ text: String(entry) }] };
  const record = entry as Record<string, unknown>;
  const attributes: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(record)) {
    if (key !== TEXT_KEY[field] && ['string', 'number', 'boolean'].includes(typeof value)) attributes.push([key, String(value)]);
  }
  const element: XmlElement = { element: child, children: [{ text: String(record[TEXT_KEY[field]] ?? '') }] };
  if (attributes.length > 0) element.attributes = attributes;
  return element;
}
