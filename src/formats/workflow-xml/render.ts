/**
 * Writing a checkpoint as workflow-xml: the stored tree of an imported
 * document with its slots filled from the checkpoint's current fields, or a
 * `<workflow_checkpoint>` built from the fields alone.
 *
 * @module
 */
import type { Checkpoint } from '../../domain/checkpoint.js';
import { elementFrom, listOf, ROOT_SLOTS, textOf, type Slot } from './fields.js';
import { FORMAT } from './parse.js';
import { isElement, storedTree, writeXml, type XmlElement, type XmlNode } from './xml-tree.js';

export function renderWorkflowXml(checkpoint: Checkpoint): string {
  const stored = storedTree((checkpoint.extensions[FORMAT] as { nodes?: unknown } | undefined)?.nodes);
  const root = stored?.find(isElement);
  const slots = root === undefined ? undefined : ROOT_SLOTS.get(root.element);
  if (stored === undefined || root === undefined || slots === undefined) return writeXml(fromFields(checkpoint));
  for (const slot of slots) fill(root, slot, checkpoint);
  return writeXml(stored);
}

function fromFields(checkpoint: Checkpoint): XmlNode[] {
  const root: XmlElement = {
    element: 'workflow_checkpoint',
    children: [
      { element: 'checkpoint_id', children: [{ text: checkpoint.id }] },
      { element: 'timestamp', children: [{ text: checkpoint.updatedAt }] },
    ],
  };
  for (const slot of ROOT_SLOTS.get(root.element)!) fill(root, slot, checkpoint);
  return [
    {
      instruction: 'xml',
      attributes: [
        ['version', '1.0'],
        ['encoding', 'UTF-8'],
      ],
    },
    root,
  ];
}

function fill(root: XmlElement, slot: Slot, checkpoint: Checkpoint): void {
  if (slot.kind === 'text') fillText(root, slot, checkpoint);
  else fillList(root, slot, checkpoint);
}

function fillText(root: XmlElement, slot: Extract<Slot, { kind: 'text' }>, checkpoint: Checkpoint): void {
  const value = textOf(checkpoint, slot.field);
  const found = locate(root, slot.path);
  if (found === undefined) {
    if (value !== undefined) ensure(root, slot.path).children = [{ text: value }];
    return;
  }
  const kept = found.element.children.find((child) => 'slot' in child && child.slot === slot.field) as { raw?: string } | undefined;
  const text = value ?? kept?.raw;
  // A field removed since import takes its element with it, unless the element held text the field never had.
  if (text === undefined) found.parent.children = found.parent.children.filter((child) => child !== found.element);
  else found.element.children = [{ text }];
}

function fillList(root: XmlElement, slot: Extract<Slot, { kind: 'list' }>, checkpoint: Checkpoint): void {
  const entries = listOf(checkpoint, slot.field);
  const found = locate(root, slot.path);
  if (found === undefined && entries === undefined) return;
  const container = found?.element ?? ensure(root, slot.path);
  const values = (entries ?? []).map((entry) => elementFrom(slot.field, slot.child, entry));
  const children: XmlNode[] = [];
  let next = 0;
  let afterLast = -1;
  // Entries fill the places the document gave them; more entries follow the last of those places.
  for (const child of container.children) {
    if (!('slot' in child) || child.slot !== slot.field) children.push(child);
    else if (next < values.length) {
      children.push(values[next++]!);
      afterLast = children.length;
    }
  }
  const rest = values.slice(next);
  if (afterLast < 0) children.push(...rest);
  else children.splice(afterLast, 0, ...rest);
  container.children = children;
}

function locate(root: XmlElement, path: readonly string[]): { element: XmlElement; parent: XmlElement } | undefined {
  let parent = root;
  let element: XmlElement | undefined;
  for (const name of path) {
    if (element !== undefined) parent = element;
    element = parent.children.find((child): child is XmlElement => isElement(child) && child.element === name);
    if (element === undefined) return undefined;
  }
  return element === undefined ? undefined : { element, parent };
}

/** The element at `path`, created (last among its siblings) where missing. */
function ensure(root: XmlElement, path: readonly string[]): XmlElement {
  let current = root;
  for (const name of path) {
    let next = current.children.find((child): child is XmlElement => isElement(child) && child.element === name);
    if (next === undefined) {
      next = { element: name, children: [] };
      current.children.push(next);
    }
    current = next;
  }
  return current;
}
