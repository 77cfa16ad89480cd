/**
 * Reading JSON documents (builder-state, pipeline): a strict parse that
 * refuses prototype keys and absurd nesting, and typed field readers whose
 * errors name the JSON path at fault.
 *
 * @module
 */
import secureJson from 'secure-json-parse';
import { z } from 'zod';
import { checkSize, FormatError, positionOf } from './errors.js';

export type JsonObject = Record<string, unknown>;

/** Large enough for any checkpoint the service stores; the HTTP body limit is usually smaller. */
export const MAX_JSON_CHARS = 4 * 1024 * 1024;
/** Agents' checkpoint files nest a handful of levels; deeper input only risks stack exhaustion further on. */
export const MAX_JSON_DEPTH = 64;

/** Parses `text` as JSON for `format`, with the line and column of a syntax error. */
export function parseJson(format: string, text: string): unknown {
  checkSize(format, text, MAX_JSON_CHARS);
  let value: unknown;
  try {
    value = secureJson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (cause) {
    throw syntaxError(format, text, cause);
  }
  checkDepth(format, value);
  return value;
}

function syntaxError(format: string, text: string, cause: unknown): FormatError {
  const reason = cause instanceof Error ? cause.message : '';
  if (reason.includes('prototype property')) {
    return new FormatError({ format, field: 'document', expected: 'no "__proto__" or "constructor.prototype" keys' }, { cause });
  }
  const marker = ' in JSON at position ';
  const at = reason.indexOf(marker);
  if (at >= 0) {
    const { line, column } = positionOf(text, Number.parseInt(reason.slice(at + marker.length), 10));
    return new FormatError({ format, line, column, expected: `well-formed JSON (${reason.slice(0, at)})` }, { cause });
  }
  if (reason.startsWith('Unexpected end of JSON input')) {
    const { line, column } = positionOf(text, text.length);
    return new FormatError({ format, line, column, expected: 'the rest of the JSON document' }, { cause });
  }
  return new FormatError({ format, field: 'document', expected: 'well-formed JSON' }, { cause });
}

/** Refuses values nested deeper than MAX_JSON_DEPTH, without recursion. */
function checkDepth(format: string, root: unknown): void {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_JSON_DEPTH) throw new FormatError({ format, field: 'document', expected: `JSON nested at most ${MAX_JSON_DEPTH} levels deep` });
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `parent.key` or `parent[index]`, the way fields are named in errors. */
export function pathTo(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

const isoTimestamp = z.iso.datetime({ offset: true });

/** Typed reads of a parsed JSON document; each failure names the path and the type expected. */
export class JsonFields {
  constructor(readonly format: string) {}

  fail(field: string, expected: string): never {
    throw new FormatError({ format: this.format, field, expected });
  }

  object(value: unknown, field: string): JsonObject {
    return isObject(value) ? value : this.fail(field, 'a JSON object');
  }

  array(value: unknown, field: string): unknown[] {
    return Array.isArray(value) ? value : this.fail(field, 'a JSON array');
  }

  string(value: unknown, field: string): string {
    return typeof value === 'string' ? value : this.fail(field, 'a string');
  }

  number(value: unknown, field: string): number {
    return typeof value === 'number' && Number.isFinite(value) ? value : this.fail(field, 'a number');
  }

  strings(value: unknown, field: string): string[] {
    return this.array(value, field).map((entry, index) => this.string(entry, pathTo(field, index)));
  }

  timestamp(value: unknown, field: string): string {
    const text = this.string(value, field);
    return isoTimestamp.safeParse(text).success ? text : this.fail(field, 'an ISO 8601 date-time with a time zone, e.g. 2026-02-28T10:00:00Z');
  }
}
