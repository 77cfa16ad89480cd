/**
 * RFC 8785 (JSON Canonicalization Scheme) serialization, written for the
 * write path: every checkpoint and audit entry is canonicalized before it is
 * hashed, so this runs several times per write. It produces the same bytes as
 * the `canonicalize` package (the test suite checks both against each other
 * and against the RFC's samples) at about a third of the cost: one pass that
 * appends to a single string, `JSON.stringify` for every string and number
 * (ECMAScript's number-to-string is RFC 8785's, and its string escaping is
 * RFC 8785's for well-formed strings), the native `isWellFormed` for lone
 * surrogates, and cycles found on the path of ancestors, as `canonicalize`
 * finds them: a value nested however deep is serialised, the same object
 * twice side by side is no cycle, and an object inside itself is refused.
 *
 * @module
 */

/**
 * Nesting below which the ancestors are not searched: a cycle nests without
 * end, so it is still found (a few levels later), while the usual shallow
 * value pays only for keeping the path, not for searching it.
 */
const SEARCH_FROM_DEPTH = 32;

/** RFC 8785 canonical JSON of `value`; undefined for a value JSON cannot represent (as `canonicalize`). */
export function canonicalize(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return undefined;
  const sorted = sortedCopy(value, 0);
  return sorted === SLOW ? write(value, []) : JSON.stringify(sorted);
}

/** What {@link sortedCopy} answers for a value only {@link write} serialises as RFC 8785 asks. */
const SLOW: unique symbol = Symbol('slow');

/**
 * The value with every object's members in RFC 8785's order, for the
 * engine's own `JSON.stringify`, which writes members in the order they
 * were added, strings and numbers exactly as RFC 8785 asks, and the text
 * in one piece: about half the time of {@link write} and a tenth of its
 * garbage (its string pieces were the largest allocation of a create,
 * `docs/performance.md`, issue 44). {@link SLOW} where the engine would
 * differ: a member name that is an array index (engines write those first,
 * in numeric order), `__proto__` (which an assignment would not add as a
 * member), a `toJSON` method, a bigint, or nesting deep enough to be a
 * cycle. Refuses what {@link write} refuses, with the same errors.
 */
function sortedCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw new Error('Lone surrogate is not allowed');
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new Error(Number.isNaN(value) ? 'NaN is not allowed' : 'Infinity is not allowed');
      return value;
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return SLOW;
  }
  if (value === null) return null;
  if (depth >= SEARCH_FROM_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return SLOW;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') out[i] = null;
      else if ((out[i] = sortedCopy(item, depth + 1)) === SLOW) return SLOW;
    }
    return out;
  }
  const object = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  // One array of keys for each depth, reused (`KEYS_AT`); one already in use (a getter that canonicalizes another value) is not.
  const scratch = KEYS_AT[depth]!;
  const reused = !scratch.inUse;
  const keys = reused ? scratch.keys : Object.keys(object);
  const count = reused ? ownKeysInto(object, keys) : keys.length;
  sortInPlace(keys, count);
  if (reused) scratch.inUse = true;
  try {
    for (let i = 0; i < count; i++) {
      const key = keys[i]!;
      const member = object[key];
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
      if (!key.isWellFormed()) throw new Error('Lone surrogate is not allowed');
      if (key === '__proto__' || isArrayIndex(key)) return SLOW;
      const copy = sortedCopy(member, depth + 1);
      if (copy === SLOW) return SLOW;
      out[key] = copy;
    }
  } finally {
    if (reused) scratch.inUse = false;
  }
  return out;
}

/**
 * One array of keys for each depth of {@link sortedCopy}, reused and never
 * shortened (its first `count` entries are the object's): the object at a
 * depth is done with its keys before the next object at that depth is
 * begun. `Object.keys` copies an object's keys into a new array each time
 * (~2.8 KB of a create's garbage, `docs/performance.md`); a `for…in` loop
 * reads them from the engine's cache of them.
 */
const KEYS_AT: { keys: string[]; inUse: boolean }[] = Array.from({ length: SEARCH_FROM_DEPTH }, () => ({ keys: [], inUse: false }));
const hasOwn = Object.prototype.hasOwnProperty;

/** Writes the object's own enumerable keys from the start of `keys`: how many. */
function ownKeysInto(object: object, keys: string[]): number {
  let count = 0;
  for (const key in object) if (hasOwn.call(object, key)) keys[count++] = key;
  return count;
}

/** Whether engines treat `key` as an array index (a canonical integer below 2^32 - 1), whose members they order first. */
function isArrayIndex(key: string): boolean {
  const first = key.charCodeAt(0);
  if (!(first >= 0x30 && first <= 0x39) || key.length > 10) return false;
  if (!/^(?:0|[1-9][0-9]*)$/.test(key)) return false;
  return Number(key) < 4_294_967_295;
}

/** `ancestors`: the objects and arrays `value` is inside, outermost first. */
function write(value: unknown, ancestors: object[]): string {
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw new Error('Lone surrogate is not allowed');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new Error(Number.isNaN(value) ? 'NaN is not allowed' : 'Infinity is not allowed');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      // bigint: JSON has no form for it (JSON.stringify throws the same TypeError).
      return JSON.stringify(value);
  }
  if (value === null) return 'null';
  if (ancestors.length >= SEARCH_FROM_DEPTH && ancestors.includes(value)) throw new Error('Circular reference detected');
  ancestors.push(value);
  const text = writeObject(value, ancestors);
  ancestors.pop();
  return text;
}

function writeObject(value: object, ancestors: object[]): string {
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return write(toJSON.call(value), ancestors);
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ',';
      const item: unknown = value[i];
      text += item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 'null' : write(item, ancestors);
    }
    return text + ']';
  }
  const object = value as Record<string, unknown>;
  const keys = sortedKeys(object);
  let text = '{';
  let first = true;
  for (const key of keys) {
    const member = object[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    if (!key.isWellFormed()) throw new Error('Lone surrogate is not allowed');
    text += first ? JSON.stringify(key) : ',' + JSON.stringify(key);
    text += ':' + write(member, ancestors);
    first = false;
  }
  return text + '}';
}

/** Objects with more keys than this are sorted by `Array.prototype.sort`. */
const INSERTION_SORT_MAX = 32;

/**
 * The object's own enumerable keys in RFC 8785's order of member names: by
 * UTF-16 code units, as `<` and the default sort compare strings. An object
 * of a checkpoint has a few keys, sorted here in place by insertion;
 * `Array.prototype.sort` copies them into a work array first, which was
 * 13 KB of the ~200 KB a create allocates (`docs/performance.md`).
 */
function sortedKeys(object: object): string[] {
  const keys = Object.keys(object);
  sortInPlace(keys, keys.length);
  return keys;
}

/** The first `count` of `keys` sorted in RFC 8785's order, in place. */
function sortInPlace(keys: string[], count: number): void {
  if (count > INSERTION_SORT_MAX) {
    const sorted = keys.slice(0, count).sort();
    for (let i = 0; i < count; i++) keys[i] = sorted[i]!;
    return;
  }
  for (let i = 1; i < count; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
}
