/**
 * The record of what a process's last commits over FoundationDB read
 * (`src/store/fdb-committed.ts`), without a cluster: which commit a write's
 * side-by-side reads are answered from, and what the record forgets. The
 * reads themselves, over a real cluster, are `fdb-committed-reads.test.ts`'s.
 */
import { describe, expect, it } from 'vitest';
import { CommittedValues, MAX_KEYS } from '../../src/store/fdb-committed.js';

const version = (n: number): Buffer => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(n));
  return bytes;
};
const values = (...ids: string[]) => new Map(ids.map((id) => [id, Buffer.from(`${id} value`)] as const));

describe('the commits a write reads from', () => {
  it('is the commit that read the most of the keys asked for, the newer on a tie', () => {
    const commits = new CommittedValues(100, 1_000);
    commits.record(version(10), values('header', 'head/a', 'settings'), [], 0);
    commits.record(version(20), values('header', 'head/b', 'settings'), [], 1);
    commits.record(version(30), values('header', 'settings'), [], 2);
    expect(commits.choose(['header', 'head/a', 'settings'], 3)?.version).toEqual(version(10));
    expect(commits.choose(['header', 'head/b', 'settings'], 3)?.version).toEqual(version(20));
    expect(commits.choose(['header', 'settings'], 3)?.version).toEqual(version(30));
    expect(commits.choose(['head/c'], 3)).toBeUndefined();
  });

  it('leaves out a commit older than the age a read version may have, and the oldest past the capacity', () => {
    const commits = new CommittedValues(2, 1_000);
    commits.record(version(10), values('head/a'), [], 0);
    expect(commits.choose(['head/a'], 1_000)?.version).toEqual(version(10));
    expect(commits.choose(['head/a'], 1_001)).toBeUndefined();
    commits.record(version(20), values('head/b'), [], 10);
    commits.record(version(30), values('head/c'), [], 20);
    expect(commits.size).toBe(2);
    expect(commits.choose(['head/a'], 30)).toBeUndefined();
    expect(commits.choose(['head/b', 'head/c'], 30)?.version).toEqual(version(30));
  });

  it('records no commit that read more keys than a write of one task reads', () => {
    const commits = new CommittedValues(100, 1_000);
    const many = Array.from({ length: MAX_KEYS + 1 }, (_, i) => `record/${i}`);
    commits.record(version(10), values(...many), [], 0);
    expect(commits.size).toBe(0);
    commits.record(version(20), values(...many.slice(0, MAX_KEYS)), [], 0);
    expect(commits.choose(['record/0'], 1)?.version).toEqual(version(20));
  });

  it('forgets a key changed by an atomic add, keeping what else its commit read', () => {
    const commits = new CommittedValues(100, 1_000);
    commits.record(version(10), values('counter', 'head/a'), [], 0);
    commits.record(version(20), new Map(), ['counter'], 1);
    expect(commits.choose(['counter'], 2)).toBeUndefined();
    const chosen = commits.choose(['head/a', 'counter'], 2);
    expect(chosen?.version).toEqual(version(10));
    expect([...chosen!.values.keys()]).toEqual(['head/a']);
  });
});

describe('reading from commits where other instances write the same keys', () => {
  const twice = (commits: CommittedValues, reruns: number, now: number) => {
    for (let i = 0; i < 200; i++) commits.outcome(i < reruns, now);
  };

  it('pauses once more than one in twenty of the writes that read from them ran again, and resumes after the pause', () => {
    const commits = new CommittedValues(100, 60_000);
    commits.record(version(10), values('head/a'), [], 0);
    twice(commits, 10, 1);
    expect(commits.reading(1)).toBe(true);
    expect(commits.choose(['head/a'], 1)?.version).toEqual(version(10));
    twice(commits, 11, 2);
    expect(commits.reading(2)).toBe(false);
    expect(commits.choose(['head/a'], 2)).toBeUndefined();
    expect(commits.reading(30_002)).toBe(true);
    expect(commits.choose(['head/a'], 30_002)?.version).toEqual(version(10));
  });
});

describe('reading from commits while the cluster answers', () => {
  it('is allowed only within the quiet window after the cluster last answered', () => {
    const commits = new CommittedValues(100, 1_000, 2);
    expect(commits.heardLately(0)).toBe(false);
    commits.answered(100);
    expect(commits.heardLately(101.5)).toBe(true);
    expect(commits.heardLately(102.5)).toBe(false);
  });
});
