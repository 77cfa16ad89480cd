/**
 * Compiled validation of the hot routes' bodies. zod walks a checkpoint
 * body (a few hundred values) as a tree of closures and copies it as it
 * goes: ~25 µs and ~25 KB of garbage a create (`docs/performance.md`,
 * issue 44). The same schema, written as JSON Schema by zod itself
 * (`z.toJSONSchema`), is compiled by Ajv (the validator Fastify compiles
 * its own schemas with) into one straight-line function that allocates
 * nothing for a valid body.
 *
 * The compiled check is a fast path, never the judge: a body it accepts is
 * one zod accepts, as it is (the schemas here transform nothing and strip
 * nothing, so zod's output equals its input); a body it refuses goes to zod,
 * which answers as it always did, with the same error document. To keep
 * "accepts" a subset of zod's:
 * - zod counts a string's length in code points (`codePointLength`), so an
 *   emoji counts once; the compiled check counts UTF-16 units (Ajv's
 *   `unicode: false`: `.length`, where counting code points walked every
 *   string of the body, ~4 µs a create), never fewer: a `maxLength` it
 *   passes zod passes, and a string near the limit in emoji goes to zod.
 *   A `minLength` above 1 would pass strings zod refuses, so a schema
 *   with one is compiled counting code points as zod does (every
 *   `minLength` of a checkpoint is 1: empty or not, alike in both);
 * - patterns run without the `u` flag, as zod's regular expressions do;
 * - formats are not checked: zod writes each format's own pattern beside it
 *   (date-time, uuid), and the pattern is what zod checks;
 * - a pattern whose zod flags JSON Schema cannot carry (such as `i`) only
 *   makes the compiled check stricter: such a body goes to zod.
 * `test/http/compiled-validation.property.test.ts` holds the two to this
 * on generated and mutated bodies.
 *
 * Ajv's `anyOf` records an error (an object, its paths and message built
 * as strings) for each alternative that fails before one passes, and a
 * checkpoint's items are each a string or an object: ~4.7 KB of garbage a
 * valid create. Every `anyOf` of the schema chooses by type, so it is
 * compiled as one schema of several types ({@link typeDispatched}), whose
 * keywords Ajv checks by type without recording errors.
 *
 * @module
 */
import { Ajv } from 'ajv';
import { z } from 'zod';
import { checkpointInput } from '../domain/checkpoint.js';

/** The zod schemas checked by a compiled validator first: the bodies of the routes agents call most. */
const COMPILED: readonly z.ZodType[] = [checkpointInput];

const compiled = new WeakMap<z.ZodType, (data: unknown) => boolean>();
const ajvs = new Map<boolean, Ajv>();

/** Ajv as the compiled checks use it; `unitLengths`: string lengths in UTF-16 units (`.length`), not code points. */
export function ajvFor(unitLengths: boolean): Ajv {
  let ajv = ajvs.get(unitLengths);
  if (ajv === undefined) {
    // `unicode` is marked deprecated (Ajv warns of it on the console: `logger: false`), and still chooses how lengths are counted.
    ajv = new Ajv({ unicodeRegExp: false, validateFormats: false, strict: false, allErrors: false, unicode: !unitLengths, logger: false });
    ajvs.set(unitLengths, ajv);
  }
  return ajv;
}

/** Whether no `minLength` anywhere in `schema` exceeds 1: then counting UTF-16 units passes no string that zod's code points refuse. */
export function minLengthsAtMostOne(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(minLengthsAtMostOne);
  if (typeof schema !== 'object' || schema === null) return true;
  const { minLength } = schema as Record<string, unknown>;
  if (minLength !== undefined && !(typeof minLength === 'number' && minLength <= 1)) return false;
  return Object.values(schema).every(minLengthsAtMostOne);
}

/**
 * The compiled check of `schema` (compiled on first use), or undefined when it
 * is not one of the hot routes' schemas: a function answering true only for
 * a value zod's `schema.parse` accepts and returns unchanged.
 */
export function compiledCheck(schema: unknown): ((data: unknown) => boolean) | undefined {
  if (!COMPILED.includes(schema as z.ZodType)) return undefined;
  const zod = schema as z.ZodType;
  let check = compiled.get(zod);
  if (check === undefined) {
    const json = typeDispatched(jsonSchemaOf(zod));
    const validate = ajvFor(minLengthsAtMostOne(json)).compile(json);
    check = (data: unknown) => validate(data) === true;
    compiled.set(zod, check);
  }
  return check;
}

/** The JSON Schema zod writes for `schema`'s input (draft 7, as Ajv compiles it). */
export function jsonSchemaOf(schema: z.ZodType): object {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw', target: 'draft-7' }) as object;
}

type Schema = Record<string, unknown>;

/**
 * The keywords that constrain only values of one JSON type (JSON Schema
 * draft 7, "Validation Keywords"): a value of another type passes them.
 * Annotations (`description`, `title`, …) constrain nothing.
 */
const ONLY_FOR: Readonly<Record<string, readonly string[]>> = {
  string: ['maxLength', 'minLength', 'pattern', 'format'],
  number: ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'],
  integer: ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'],
  object: ['maxProperties', 'minProperties', 'required', 'properties', 'patternProperties', 'additionalProperties', 'dependencies', 'propertyNames'],
  array: ['items', 'additionalItems', 'maxItems', 'minItems', 'uniqueItems', 'contains'],
  boolean: [],
  null: [],
};
const ANNOTATIONS = new Set(['description', 'title', '$comment', 'examples']);

/** The one type an alternative admits and its other keywords, when each of them constrains only that type. */
function typedAlternative(alternative: unknown): { type: string; keywords: Schema } | undefined {
  if (typeof alternative !== 'object' || alternative === null || Array.isArray(alternative)) return undefined;
  const { type, ...rest } = alternative as Schema;
  if (typeof type !== 'string') return undefined;
  const own = ONLY_FOR[type];
  if (own === undefined) return undefined;
  const keywords: Schema = {};
  for (const [key, value] of Object.entries(rest)) {
    if (ANNOTATIONS.has(key)) continue;
    if (!own.includes(key)) return undefined;
    keywords[key] = value;
  }
  return { type, keywords };
}

/**
 * `schema` with every `anyOf` whose alternatives each admit one JSON type,
 * no two the same (nor both `integer` and `number`, which overlap), and
 * constrain it only with keywords of that type, written as one schema of
 * those types with all their keywords: `{ "type": ["string", "object"],
 * "maxLength": …, "properties": … }`. Each keyword binds only values of
 * its own type, so a value passes the one schema exactly when it passes the
 * alternative of its type, as the `anyOf` asks; Ajv checks each type's
 * keywords in a branch of its own and records nothing for a value that
 * passes. An `anyOf` of any other shape is kept as it is.
 */
export function typeDispatched(schema: unknown): Schema {
  return dispatch(schema) as Schema;
}

function dispatch(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(dispatch);
  if (typeof node !== 'object' || node === null) return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node as Schema)) out[key] = dispatch(value);
  const { anyOf } = out;
  if (!Array.isArray(anyOf) || anyOf.length < 2 || 'type' in out) return out;
  const typed = anyOf.map(typedAlternative);
  const types = typed.map((alternative) => alternative?.type);
  if (typed.some((alternative) => alternative === undefined) || new Set(types).size !== types.length || (types.includes('integer') && types.includes('number'))) return out;
  const merged: Schema = { type: types };
  for (const alternative of typed) Object.assign(merged, alternative!.keywords);
  if (Object.keys(merged).some((key) => key in out && key !== 'anyOf')) return out;
  delete out.anyOf;
  return { ...out, ...merged };
}

/**
 * A create's body, checked as the route checks it: by the compiled check,
 * then, when that refuses it, by zod. The floor route of `loadtest/` takes
 * the same path, so that Baton and its floor validate alike.
 */
export function parseCheckpointInput(body: unknown): ReturnType<typeof checkpointInput.safeParse> {
  if (compiledCheck(checkpointInput)!(body)) return { success: true, data: body as z.infer<typeof checkpointInput> } as ReturnType<typeof checkpointInput.safeParse>;
  return checkpointInput.safeParse(body);
}
