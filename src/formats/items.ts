/**
 * The checkpoint's list entries (items, decisions, file references) as the
 * converters read them when rendering a checkpoint into a format that only
 * has room for text.
 *
 * @module
 */
import type { z } from 'zod';
import type { decision, fileRef, item } from '../domain/checkpoint.js';

export type Item = z.infer<typeof item>;
export type ItemObject = Exclude<Item, string>;
export type Decision = z.infer<typeof decision>;
export type DecisionObject = Exclude<Decision, string>;
export type FileRef = z.infer<typeof fileRef>;

export function itemText(entry: Item): string {
  return typeof entry === 'string' ? entry : entry.description;
}

export function decisionText(entry: Decision): string {
  return typeof entry === 'string' ? entry : entry.decision;
}

export function filePath(entry: FileRef): string {
  return typeof entry === 'string' ? entry : entry.path;
}

/** The keys of `source` except `skip`, in their order: what a format carries through unchanged. */
export function otherKeys(source: object, skip: readonly string[]): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) if (!skip.includes(key)) rest[key] = value;
  return rest;
}
