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
  return write(value, []);
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
  if (keys.length > INSERTION_SORT_MAX) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}
