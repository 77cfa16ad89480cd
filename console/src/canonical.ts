/**
 * RFC 8785 (JSON Canonicalization Scheme) for values parsed from JSON, as
 * docs/hashing.md describes: object members sorted by their names' UTF-16
 * code units, no whitespace, numbers and strings written as ECMAScript's
 * JSON.stringify writes them (which is what the RFC specifies). The service
 * hashes the same form; test/console/canonical.test.ts holds the two equal.
 *
 * @module
 */

export function canonicalize(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('JSON has no NaN or Infinity.');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalize(item === undefined ? null : item)).join(',')}]`;
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    // Array.prototype.sort compares strings by UTF-16 code units, the order RFC 8785 §3.2.3 asks for.
    const names = Object.keys(record)
      .filter((name) => record[name] !== undefined)
      .sort();
    return `{${names.map((name) => `${JSON.stringify(name)}:${canonicalize(record[name])}`).join(',')}}`;
  }
  throw new TypeError(`A ${typeof value} is not a JSON value.`);
}
