/** The changes the console shows between two versions of a checkpoint. */
import { describe, expect, it } from 'vitest';
import { diffValues, MAX_CHANGES } from '../../console/src/diff.js';

describe('diffValues', () => {
  it('names each changed field by its path, with the value before and after', () => {
    const before = { version: 1, executionState: { phase: 'implementing', completedItems: ['a'] }, labels: { team: 'core', 'x-y': 1 } };
    const after = { version: 2, executionState: { phase: 'testing', completedItems: ['a', { description: 'b' }] }, labels: { 'x-y': 2 }, parentId: 'p' };
    expect(diffValues(before, after)).toEqual({
      truncated: false,
      changes: [
        { path: 'executionState.completedItems[1]', kind: 'added', after: { description: 'b' } },
        { path: 'executionState.phase', kind: 'changed', before: 'implementing', after: 'testing' },
        { path: 'labels.team', kind: 'removed', before: 'core' },
        { path: 'labels["x-y"]', kind: 'changed', before: 1, after: 2 },
        { path: 'parentId', kind: 'added', after: 'p' },
        { path: 'version', kind: 'changed', before: 1, after: 2 },
      ],
    });
  });

  it('finds nothing between equal values, and reports a change of type whole', () => {
    expect(diffValues({ a: [1, { b: null }] }, { a: [1, { b: null }] }).changes).toEqual([]);
    expect(diffValues({ a: [1] }, { a: { 0: 1 } }).changes).toEqual([{ path: 'a', kind: 'changed', before: [1], after: { 0: 1 } }]);
  });

  it('stops at its limit and says so', () => {
    const many = Object.fromEntries(Array.from({ length: MAX_CHANGES + 5 }, (_, i) => [`k${i}`, i]));
    const { changes, truncated } = diffValues({}, many);
    expect(changes).toHaveLength(MAX_CHANGES);
    expect(truncated).toBe(true);
  });
});
