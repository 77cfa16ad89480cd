/**
 * Small fast-check arbitraries shared by the format property tests, each
 * within what the checkpoint schema accepts for the field it fills.
 */
import fc from 'fast-check';
import type { CheckpointInput } from '../../src/domain/checkpoint.js';

/** Any text, Unicode and ASCII punctuation alike. */
export const anyText = fc.oneof(fc.string({ maxLength: 24 }), fc.string({ unit: 'grapheme', maxLength: 12 }));

/** Caller-chosen ids: printable, 1–200 characters. */
export const externalId = fc
  .string({ minLength: 1, maxLength: 16 })
  .filter((value) => ![...value].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f));

export const timestamp = fc.date({ min: new Date('2001-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString());

export const filePath = fc.stringMatching(/^[a-z][a-z0-9_.-]{0,8}(\/[a-z0-9_.-]{1,8}){0,3}$/);

/** Text that XML keeps as written once trimmed: no control characters, no carriage returns, no surrounding whitespace. */
export const xmlText = fc
  .string({ unit: fc.constantFrom('a', 'b', 'Z', '0', ' ', '<', '>', '&', '"', "'", '-', '_', 'é', '中', '🙂', ';', '#', '\n'), maxLength: 16 })
  .map((value) => value.trim());

/** Attribute values: as xmlText, but on one line (XML folds newlines in attributes to spaces). */
export const attributeText = xmlText.map((value) => value.replaceAll('\n', ' ').trim());

/** JSON values for keys a format does not define; no prototype-like keys, which the JSON reader refuses. */
export const jsonValue = fc.jsonValue({ maxDepth: 2 }).filter((value) => !JSON.stringify(value).includes('"__proto__"') && !JSON.stringify(value).includes('"prototype"'));

/** The part of an input every format should give back, with sections that ended up empty left out. */
export function comparable(input: CheckpointInput): Record<string, unknown> {
  const { extensions: _extensions, ...rest } = input;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0) continue;
    out[key] = value;
  }
  return out;
}

/** An object record where at least one optional key is present beside the required ones. */
export function withSomeOf<T extends object>(record: fc.Arbitrary<T>, required: number): fc.Arbitrary<T> {
  return record.filter((value) => Object.keys(value).length > required);
}
