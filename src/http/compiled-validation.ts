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
 * - lengths count code points in both (Ajv's `ucs2length`; zod 4's
 *   length checks, `codePointLength`), so an emoji counts once in each;
 * - patterns run without the `u` flag, as zod's regular expressions do;
 * - formats are not checked: zod writes each format's own pattern beside it
 *   (date-time, uuid), and the pattern is what zod checks;
 * - a pattern whose zod flags JSON Schema cannot carry (such as `i`) only
 *   makes the compiled check stricter: such a body goes to zod.
 * `test/http/compiled-validation.property.test.ts` holds the two to this
 * on generated and mutated bodies.
 *
 * @module
 */
import { Ajv } from 'ajv';
import { z } from 'zod';
import { checkpointInput } from '../domain/checkpoint.js';

/** The zod schemas checked by a compiled validator first: the bodies of the routes agents call most. */
const COMPILED: readonly z.ZodType[] = [checkpointInput];

const compiled = new WeakMap<z.ZodType, (data: unknown) => boolean>();
let ajv: Ajv | undefined;

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
    ajv ??= new Ajv({ unicodeRegExp: false, validateFormats: false, strict: false, allErrors: false });
    const validate = ajv.compile(z.toJSONSchema(zod, { io: 'input', unrepresentable: 'throw', target: 'draft-7' }) as object);
    check = (data: unknown) => validate(data) === true;
    compiled.set(zod, check);
  }
  return check;
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
