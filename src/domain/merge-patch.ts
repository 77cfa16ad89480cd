/**
 * JSON Merge Patch (RFC 7396). Twelve lines of the RFC's own pseudo-code; a
 * dependency would cost more than it saves.
 *
 * @module
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Applies `patch` to `target` as RFC 7396 §2 says; neither argument is changed. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
      continue;
    }
    // Defined, not assigned: a member named `__proto__` is data here, never the prototype.
    const current = Object.hasOwn(result, key) ? result[key] : undefined;
    Object.defineProperty(result, key, { value: applyMergePatch(current, value), enumerable: true, writable: true, configurable: true });
  }
  return result;
}

export type { Json };
