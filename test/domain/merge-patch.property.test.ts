/**
 * Properties of `applyMergePatch` against RFC 7396 (JSON Merge Patch), and
 * the RFC's own Appendix A examples, verbatim.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMergePatch } from '../../src/domain/merge-patch.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keys that collide with Object.prototype members are generated on purpose: a merge patch must treat them as plain names. */
const key = fc.oneof(
  { weight: 8, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom('a', 'b', 'c', 'toString', 'constructor', 'hasOwnProperty', 'valueOf') },
);

/** Any JSON value; objects get small key sets so that target and patch keys collide often. */
const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -5, max: 5 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ maxLength: 4 }),
    fc.array(tie('json'), { maxLength: 3 }),
    fc.dictionary(key, tie('json'), { maxKeys: 4, noNullPrototype: true }),
  ),
}));

const jsonObject = fc.dictionary(key, json, { maxKeys: 5, noNullPrototype: true });

/** A JSON value without null anywhere (not even inside arrays). */
const { nullFree } = fc.letrec<{ nullFree: Json }>((tie) => ({
  nullFree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.boolean(),
    fc.integer({ min: -5, max: 5 }),
    fc.string({ maxLength: 4 }),
    fc.array(tie('nullFree'), { maxLength: 3 }),
    fc.dictionary(key, tie('nullFree'), { maxKeys: 4, noNullPrototype: true }),
  ),
}));

const PARAMS = { numRuns: 500 } as const;

/** Every (path, value) of a patch: descends into objects only, as a merge patch does. */
function patchEntries(patch: Record<string, unknown>, path: string[] = []): { path: string[]; value: unknown }[] {
  return Object.entries(patch).flatMap(([k, v]) => {
    const here = [...path, k];
    return isObject(v) ? [{ path: here, value: v }, ...patchEntries(v, here)] : [{ path: here, value: v }];
  });
}

/** Walks an object path; undefined when a step is missing or not an object. */
function lookup(value: unknown, path: readonly string[]): { found: boolean; value?: unknown; parent?: unknown } {
  let current: unknown = value;
  for (let i = 0; i < path.length; i++) {
    if (!isObject(current)) return { found: false };
    const k = path[i]!;
    if (!Object.hasOwn(current, k)) return { found: false, parent: current };
    current = current[k];
  }
  return { found: true, value: current };
}

/** Object members with a null value, outside arrays (arrays are replaced verbatim by a patch). */
function nullMembers(value: unknown, path: string[] = []): string[][] {
  if (!isObject(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => (v === null ? [[...path, k]] : nullMembers(v, [...path, k])));
}

describe('applyMergePatch (RFC 7396)', () => {
  it('RFC 7396 Appendix A: all 15 examples', () => {
    // [original, patch, result], verbatim from the RFC.
    const examples: [Json, Json, Json][] = [
      [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
      [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
      [{ a: 'b' }, { a: null }, {}],
      [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
      [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
      [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
      [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
      [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
      [['a', 'b'], ['c', 'd'], ['c', 'd']],
      [{ a: 'b' }, ['c'], ['c']],
      [{ a: 'foo' }, null, null],
      [{ a: 'foo' }, 'bar', 'bar'],
      [{ e: null }, { a: 1 }, { e: null, a: 1 }],
      [[1, 2], { a: 'b', c: null }, { a: 'b' }],
      [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    ];
    expect(examples).toHaveLength(15);
    for (const [original, patch, result] of examples) {
      expect(applyMergePatch(original, patch), `${JSON.stringify(original)} + ${JSON.stringify(patch)}`).toEqual(result);
    }
  });

  it('patching an object with {} is the identity', () => {
    fc.assert(
      fc.property(jsonObject, (target) => {
        expect(applyMergePatch(target, {})).toEqual(target);
      }),
      PARAMS,
    );
  });

  it('a non-object patch replaces the target entirely', () => {
    const nonObject = json.filter((value) => !isObject(value));
    fc.assert(
      fc.property(json, nonObject, (target, patch) => {
        expect(applyMergePatch(target, patch)).toEqual(patch);
      }),
      PARAMS,
    );
  });

  it("every non-null leaf of the patch appears in the result at the patch's path", () => {
    fc.assert(
      fc.property(json, jsonObject, (target, patch) => {
        const result = applyMergePatch(target, patch);
        for (const { path, value } of patchEntries(patch)) {
          if (value === null) continue;
          const found = lookup(result, path);
          expect(found.found, `path ${JSON.stringify(path)}`).toBe(true);
          if (isObject(value)) expect(isObject(found.value), `path ${JSON.stringify(path)} is an object`).toBe(true);
          else expect(found.value, `path ${JSON.stringify(path)}`).toEqual(value);
        }
      }),
      PARAMS,
    );
  });

  it('a null in the patch removes that member from the result', () => {
    fc.assert(
      fc.property(json, jsonObject, (target, patch) => {
        const result = applyMergePatch(target, patch);
        for (const { path, value } of patchEntries(patch)) {
          if (value !== null) continue;
          expect(lookup(result, path).found, `path ${JSON.stringify(path)} is removed`).toBe(false);
        }
      }),
      PARAMS,
    );
  });

  it('members the patch does not name keep their value', () => {
    fc.assert(
      fc.property(jsonObject, jsonObject, (target, patch) => {
        const result = applyMergePatch(target, patch) as Record<string, unknown>;
        for (const [k, v] of Object.entries(target)) {
          if (!Object.hasOwn(patch, k)) expect(result[k], `member ${JSON.stringify(k)}`).toEqual(v);
        }
        // And nothing else appears: every member of the result comes from the target or the patch.
        for (const k of Object.keys(result)) expect(Object.hasOwn(target, k) || Object.hasOwn(patch, k)).toBe(true);
      }),
      PARAMS,
    );
  });

  it('the result never holds a null member that came from the patch', () => {
    fc.assert(
      fc.property(nullFree.filter(isObject), jsonObject, (target, patch) => {
        // The target has no null members, so every null member of the result would come from the patch.
        expect(nullMembers(applyMergePatch(target, patch))).toEqual([]);
      }),
      PARAMS,
    );
  });

  it('applying the same object patch twice equals applying it once (idempotence)', () => {
    fc.assert(
      fc.property(json, jsonObject, (target, patch) => {
        const once = applyMergePatch(target, patch);
        expect(applyMergePatch(once, patch)).toEqual(once);
      }),
      PARAMS,
    );
  });

  it('is idempotent for any patch, object or not', () => {
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const once = applyMergePatch(target, patch);
        expect(applyMergePatch(once, patch)).toEqual(once);
      }),
      PARAMS,
    );
  });

  it('changes neither the target nor the patch', () => {
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const targetBefore = structuredClone(target);
        const patchBefore = structuredClone(patch);
        applyMergePatch(target, patch);
        expect(target).toEqual(targetBefore);
        expect(patch).toEqual(patchBefore);
      }),
      PARAMS,
    );
  });

  it('the result does not alias the patch: changing the result leaves the patch alone', () => {
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const patchBefore = structuredClone(patch);
        scribble(applyMergePatch(structuredClone(target), patch));
        expect(patch).toEqual(patchBefore);
      }),
      PARAMS,
    );
  });

  it('the result is made of plain arrays and plain objects only', () => {
    fc.assert(
      fc.property(json, json, (target, patch) => {
        expect(hasOnlyPlainObjects(applyMergePatch(target, patch))).toBe(true);
      }),
      PARAMS,
    );
  });

  it('treats "__proto__" as an ordinary member name (no prototype change)', () => {
    // JSON.parse makes "__proto__" an own member, as any JSON parser must.
    const patch = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
    const result = applyMergePatch({}, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect((result as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(result).sort()).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(result)).toBe('{"__proto__":{"polluted":true},"a":1}');

    // Nested, too, and removal by null of a member that does not exist is a no-op.
    const nested = applyMergePatch({ x: {} }, JSON.parse('{"x": {"__proto__": {"y": 2}}}')) as { x: Record<string, unknown> };
    expect(Object.getPrototypeOf(nested.x)).toBe(Object.prototype);
    expect(JSON.stringify(nested)).toBe('{"x":{"__proto__":{"y":2}}}');
    expect(applyMergePatch({ a: 1 }, JSON.parse('{"__proto__": null}'))).toEqual({ a: 1 });
  });

  it('treats "constructor", "toString" and other Object.prototype names as ordinary members', () => {
    const result = applyMergePatch({ a: 1 }, { constructor: { x: 1 }, toString: 'y', hasOwnProperty: null });
    expect(JSON.stringify(result)).toBe('{"a":1,"constructor":{"x":1},"toString":"y"}');
  });
});

function scribble(value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) scribble(item);
    value.push('scribbled');
  } else if (isObject(value)) {
    for (const v of Object.values(value)) scribble(v);
    value['scribbled'] = true;
  }
}

function hasOnlyPlainObjects(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(hasOnlyPlainObjects);
  if (typeof value === 'object' && value !== null) {
    return Object.getPrototypeOf(value) === Object.prototype && Object.values(value).every(hasOnlyPlainObjects);
  }
  return true;
}
