import fc from 'fast-check';
import * as tuple from 'fdb-tuple';
import { describe, expect, it } from 'vitest';
import { packString, packStringBetween, Subspace, TASK_INDEX_TAG, TASK_TAGS, tenantKeyspace, unpackStrings, type KeyPart } from '../../src/store/keyspace.js';
import { StoreError } from '../../src/store/store.js';

describe('tuple keys', () => {
  it('packs a string exactly as fdb-tuple does, NUL bytes and all unicode included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        expect(packString(value).equals(tuple.pack([value]))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
    expect(packString('a\u0000b').equals(tuple.pack(['a\u0000b']))).toBe(true);
  });

  it('packs a string between a prefix and a suffix as their concatenation', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.string({ unit: 'binary' }), fc.uint8Array({ maxLength: 40 }), (prefix, value, suffix) => {
        const expected = Buffer.concat([prefix, tuple.pack([value]), suffix]);
        expect(packStringBetween(Buffer.from(prefix), value, Buffer.from(suffix)).equals(expected)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('unpacks a key of packed strings as fdb-tuple does, and refuses any other part', () => {
    const prefix = tuple.pack(['baton', 't', 'tr']);
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 5 }), (parts) => {
        const key = Buffer.concat([prefix, tuple.pack(parts)]);
        expect(unpackStrings(key, prefix.length)).toEqual(tuple.unpack(key.subarray(prefix.length)));
      }),
      { numRuns: 2_000 },
    );
    expect(unpackStrings(Buffer.concat([prefix, tuple.pack(['a', 7])]), prefix.length)).toBeUndefined();
    expect(unpackStrings(Buffer.concat([prefix, Buffer.from([0x02, 0x61])]), prefix.length)).toBeUndefined();
  });

  it('packs tuples of strings exactly as fdb-tuple does, NUL bytes and all unicode included', () => {
    const space = new Subspace(tuple.pack(['baton', 't', 'tr']));
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 5 }), (parts) => {
        const key = space.pack(...parts);
        expect(key.equals(Buffer.concat([space.prefix, tuple.pack(parts)]))).toBe(true);
        expect(space.unpack(key)).toEqual(parts);
      }),
      { numRuns: 2_000 },
    );
    expect(space.pack('a\u0000b', 'c').equals(Buffer.concat([space.prefix, tuple.pack(['a\u0000b', 'c'])]))).toBe(true);
  });

  it('packs mixed tuples exactly as fdb-tuple does, and unpacks them back', () => {
    const part = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)) as fc.Arbitrary<KeyPart>;
    const space = new Subspace(tuple.pack(['baton', 't']));
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 5 }), (parts) => {
        const key = space.pack(...parts);
        expect(key.equals(Buffer.concat([space.prefix, tuple.pack(parts as tuple.TupleItem[])]))).toBe(true);
        expect(space.unpack(key)).toEqual(parts);
      }),
      { numRuns: 1_000 },
    );
  });
});

describe('the task layout', () => {
  const part = fc.oneof(fc.string({ unit: 'binary' }), fc.integer({ min: -1_000_000, max: 1_000_000 }));

  it('packs a task-local key as the tuple ("baton", tenant, "tk", taskId, tag, …rest), unpacks it back, and tells its own tag', () => {
    const task = tenantKeyspace('acme', 'task');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.array(part, { maxLength: 3 }), fc.constantFrom(...(Object.keys(TASK_TAGS) as (keyof typeof TASK_TAGS)[])), (taskId, rest, name) => {
        const key = task[name].pack(taskId, ...rest);
        expect(key.equals(tuple.pack(['baton', 'acme', 'tk', taskId, TASK_TAGS[name], ...rest] as tuple.TupleItem[]))).toBe(true);
        expect(task[name].unpack(key)).toEqual([taskId, ...rest]);
        for (const other of Object.keys(TASK_TAGS) as (keyof typeof TASK_TAGS)[]) expect(task[other].contains(key)).toBe(other === name);
        const { begin, end } = task[name].range(taskId);
        if (rest.length > 0) expect(Buffer.compare(begin, key) <= 0 && Buffer.compare(key, end) < 0).toBe(true);
      }),
      { numRuns: 1_000 },
    );
    expect(() => task.checkpoints.range()).toThrow(/no range across tasks/);
  });

  it('puts the task index among the task’s rows and every other index where it was', () => {
    const task = tenantKeyspace('acme', 'task');
    const spaces = tenantKeyspace('acme', 'spaces');
    const at = '2026-11-29T04:00:00.000Z';
    const taskEntry = task.index.pack('task', 'task-1', at, 'id-1');
    expect(taskEntry.equals(tuple.pack(['baton', 'acme', 'tk', 'task-1', TASK_INDEX_TAG, at, 'id-1']))).toBe(true);
    expect(task.index.unpack(taskEntry)).toEqual(['task', 'task-1', at, 'id-1']);
    expect(task.index.contains(taskEntry) && !task.checkpoints.contains(taskEntry)).toBe(true);
    expect(spaces.index.pack('task', 'task-1', at, 'id-1').equals(tuple.pack(['baton', 'acme', 'ix', 'task', 'task-1', at, 'id-1']))).toBe(true);
    expect(task.index.pack('agent', 'a-1', at, 'id-1').equals(spaces.index.pack('agent', 'a-1', at, 'id-1'))).toBe(true);
    expect(spaces.checkpoints.pack('task-1', 'id-1').equals(tuple.pack(['baton', 'acme', 'cp', 'task-1', 'id-1']))).toBe(true);
  });

  it('refuses a task’s own keys, as unavailable, while the store’s layout is not known, and packs every other space', () => {
    const unknown = tenantKeyspace('acme', 'unknown');
    expect(() => unknown.checkpoints.pack('task-1', 'id-1')).toThrow(StoreError);
    expect(() => unknown.index.pack('task', 'task-1')).toThrow(/not known yet/);
    expect(unknown.meta.pack('format').equals(tuple.pack(['baton', 'acme', 'meta', 'format']))).toBe(true);
    expect(unknown.index.pack('agent', 'a-1').equals(tuple.pack(['baton', 'acme', 'ix', 'agent', 'a-1']))).toBe(true);
  });
});
