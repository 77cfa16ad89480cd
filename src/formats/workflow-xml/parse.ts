/**
 * Reading a workflow-xml document: the values of the mapped elements go to
 * the checkpoint's fields and are replaced by slots in the tree, which is kept
 * whole in `extensions['workflow-xml']` with everything else as written.
 *
 * @module
 */
import type { CheckpointInput } from '../../domain/checkpoint.js';
import { FormatError } from '../errors.js';
import type { ParseOptions } from '../format.js';
import { finishInput, pruneEmpty, resolveTaskId, UNKNOWN_AGENT } from '../input.js';
import { entryFrom, NEXT_STAGE_PHASE, ROOT_SLOTS, TEXT_KEY, type ListField, type Slot, type TextField } from './fields.js';
import { isElement, readXml, type XmlElement, type XmlNode } from './xml-tree.js';

export const FORMAT = 'workflow-xml';

export function parseWorkflowXml(text: string, options: ParseOptions): CheckpointInput {
  const nodes = readXml(FORMAT, text);
  const roots = nodes.filter(isElement);
  const root = roots[0];
  const slots = root === undefined ? undefined : ROOT_SLOTS.get(root.element);
  if (roots.length !== 1 || root === undefined || slots === undefined) {
    throw new FormatError({ format: FORMAT, field: root === undefined ? 'document' : `/${root.element}`, expected: `one root element: ${[...ROOT_SLOTS.keys()].join(', ')}` });
  }
  const input: CheckpointInput = {
    taskId: resolveTaskId(FORMAT, options),
    agentId: options.agentId ?? UNKNOWN_AGENT,
    executionState: {},
    contextSummary: {},
    metrics: {},
    recovery: {},
    extensions: { [FORMAT]: { nodes } },
  };
  const origins: Record<string, string> = {};
  for (const slot of slots) {
    const target = find(root, slot.path);
    if (target === undefined) continue;
    const where = `/${root.element}/${slot.path.join('/')}`;
    if (slot.kind === 'text') setText(input, slot.field, takeText(target, slot.field, where));
    else {
      origins[`${inputPath(slot.field)}`] = `${where}/${slot.child}`;
      setList(input, slot.field, takeList(target, slot, where));
    }
  }
  return finishInput(FORMAT, pruneEmpty(input), origins);
}

/** The element at `path` below `root`; each step must be unambiguous, since its value has one place. */
function find(root: XmlElement, path: readonly string[]): XmlElement | undefined {
  let current = root;
  let where = `/${root.element}`;
  for (const name of path) {
    where += `/${name}`;
    const matches = current.children.filter((child): child is XmlElement => isElement(child) && child.element === name);
    if (matches.length > 1) throw new FormatError({ format: FORMAT, field: where, expected: `one <${name}> element` });
    if (matches.length === 0) return undefined;
    current = matches[0]!;
  }
  return current;
}

function textContent(element: XmlElement, where: string): string {
  if (!element.children.every((child) => 'text' in child)) {
    throw new FormatError({ format: FORMAT, field: where, expected: 'text only, without child elements or comments' });
  }
  return element.children.map((child) => (child as { text: string }).text).join('');
}

/** The element's text; the element stays in the tree as a slot, and a phase it cannot name is kept raw. */
function takeText(element: XmlElement, field: TextField, where: string): string | undefined {
  const text = textContent(element, where);
  if (field !== 'phase' || NEXT_STAGE_PHASE.has(text)) {
    element.children = [{ slot: field }];
    return text;
  }
  element.children = [{ slot: field, raw: text }];
  return undefined;
}

function takeList(container: XmlElement, slot: Extract<Slot, { kind: 'list' }>, where: string): unknown[] {
  const entries: unknown[] = [];
  container.children = container.children.map((child): XmlNode => {
    if (!isElement(child) || child.element !== slot.child) return child;
    const field = `${where}/${slot.child}[${entries.length + 1}]`;
    if (child.attributes?.some(([name]) => name === TEXT_KEY[slot.field])) {
      throw new FormatError({ format: FORMAT, field: `${field}@${TEXT_KEY[slot.field]}`, expected: `no attribute named ${TEXT_KEY[slot.field]}: the element's text is its ${TEXT_KEY[slot.field]}` });
    }
    entries.push(entryFrom(slot.field, textContent(child, field), child.attributes));
    return { slot: slot.field };
  });
  return entries;
}

function setText(input: CheckpointInput, field: TextField, value: string | undefined): void {
  if (value === undefined) return;
  if (field === 'phase') input.executionState!.phase = NEXT_STAGE_PHASE.get(value);
  else if (field === 'currentFocus') input.executionState!.currentFocus = value;
  else input.recovery!.continuationPrompt = value;
}

function setList(input: CheckpointInput, field: ListField, entries: unknown[]): void {
  const target = (field === 'keyDecisions' ? input.contextSummary : field === 'filesModified' ? input.metrics : input.executionState) as Record<string, unknown>;
  target[field] = entries;
}

function inputPath(field: ListField): string {
  return field === 'keyDecisions' ? 'contextSummary.keyDecisions' : field === 'filesModified' ? 'metrics.filesModified' : `executionState.${field}`;
}
