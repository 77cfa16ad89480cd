/**
 * The fields that differ between two versions of a checkpoint, as paths
 * (`executionState.completedItems[2].description`) with the value before
 * and after. Objects are compared member by member and lists item by item,
 * so a change deep inside shows as that one field, not as a whole section.
 *
 * @module
 */

export interface FieldChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

/** No page shows more changes than this; `truncated` says when there were more. */
export const MAX_CHANGES = 1_000;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  const plain = /^[A-Za-z_$][\w$]*$/.test(key);
  if (path === '') return plain ? key : `[${JSON.stringify(key)}]`;
  return plain ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

export function diffValues(before: unknown, after: unknown): { changes: FieldChange[]; truncated: boolean } {
  const changes: FieldChange[] = [];
  let truncated = false;
  const add = (change: FieldChange): void => {
    if (changes.length < MAX_CHANGES) changes.push(change);
    else truncated = true;
  };
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (isObject(a) && isObject(b)) {
      for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
        const inA = Object.hasOwn(a, key);
        const inB = Object.hasOwn(b, key);
        if (inA && inB) walk(a[key], b[key], join(path, key));
        else if (inA) add({ path: join(path, key), kind: 'removed', before: a[key] });
        else add({ path: join(path, key), kind: 'added', after: b[key] });
      }
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        if (i >= b.length) add({ path: join(path, i), kind: 'removed', before: a[i] });
        else if (i >= a.length) add({ path: join(path, i), kind: 'added', after: b[i] });
        else walk(a[i], b[i], join(path, i));
      }
      return;
    }
    if (!Object.is(a, b)) add({ path, kind: 'changed', before: a, after: b });
  };
  walk(before, after, '');
  return { changes, truncated };
}
