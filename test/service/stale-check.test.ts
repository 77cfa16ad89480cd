/**
 * Stale-check (issue 7, item 5): files changed after a checkpoint, by content
 * hash where one was recorded, else by mtime against the checkpoint's
 * `updatedAt`; paths the checkpoint never mentioned are `unknown`.
 */
import { describe, expect, it } from 'vitest';
import type { CheckpointInput } from '../../src/domain/checkpoint.js';
import { normalisePath, recordedFiles, staleCheck } from '../../src/service/stale-check.js';
import { CREATED_AT, materialize, SEEDS } from './fixtures/seeds.js';

const H1 = 'a'.repeat(64);
const H2 = 'b'.repeat(64);
const CHECKED = new Date('2026-03-02T00:00:00.000Z');
const BEFORE = '2026-03-01T10:00:00.000Z';
const AFTER = '2026-03-01T11:00:00.000Z';

function checkpointWith(extra: Partial<CheckpointInput>) {
  return materialize({ taskId: 't', agentId: 'a', ...extra });
}

const hashed = checkpointWith({
  executionState: {
    completedItems: [
      { description: 'wrote the parser', files: { created: [{ path: 'src/parser.ts', sha256: H1 }], modified: ['src/index.ts'] } },
      { description: 'wrote its tests', files: { created: [{ path: 'test/parser.test.ts', sha256: H2.toUpperCase() }] } },
    ],
  },
  metrics: { filesModified: ['src/index.ts', 'README.md'] },
});

describe('by content hash', () => {
  it('is unchanged when the hash is the recorded one (any letter case), changed otherwise, whatever the mtime says', () => {
    const report = staleCheck(
      hashed,
      [
        { path: 'src/parser.ts', sha256: H1, mtime: AFTER },
        { path: 'test/parser.test.ts', sha256: H2 },
        { path: 'src/parser.ts', sha256: H2, mtime: BEFORE },
      ],
      CHECKED,
    );
    expect(report.files).toEqual([
      { path: 'src/parser.ts', status: 'unchanged', reason: 'sha256' },
      { path: 'test/parser.test.ts', status: 'unchanged', reason: 'sha256' },
      { path: 'src/parser.ts', status: 'changed', reason: 'sha256' },
    ]);
    expect(report.stale).toBe(true);
    expect(report.counts).toEqual({ changed: 1, unchanged: 2, unknown: 0 });
  });

  it('falls back to mtime when the caller sends no hash for a hashed path', () => {
    const report = staleCheck(hashed, [{ path: 'src/parser.ts', mtime: AFTER }], CHECKED);
    expect(report.files[0]).toMatchObject({ status: 'changed', reason: 'mtime' });
  });

  it('takes the latest record: a later item touching the path without a hash makes its content unknown', () => {
    const checkpoint = checkpointWith({
      executionState: {
        completedItems: [
          { description: 'created', files: { created: [{ path: 'a.ts', sha256: H1 }] } },
          { description: 'changed again', files: { modified: ['a.ts'] } },
          { description: 'b first', files: { created: [{ path: 'b.ts', sha256: H1 }] } },
        ],
        pendingItems: [{ description: 'b, half done', files: { modified: [{ path: 'b.ts', sha256: H2 }] } }],
      },
      metrics: { filesModified: ['b.ts'] },
    });
    expect(recordedFiles(checkpoint)).toEqual(new Map([['a.ts', undefined], ['b.ts', H2]]));
    const report = staleCheck(checkpoint, [{ path: 'a.ts', sha256: H2, mtime: BEFORE }, { path: 'b.ts', sha256: H2 }], CHECKED);
    expect(report.files.map((f) => [f.status, f.reason])).toEqual([
      ['unchanged', 'mtime'],
      ['unchanged', 'sha256'],
    ]);
  });

  it("uses the iteration's metrics.filesModified hash over the items'", () => {
    const checkpoint = checkpointWith({
      executionState: { completedItems: [{ description: 'x', files: { modified: [{ path: 'x.ts', sha256: H1 }] } }] },
      metrics: { filesModified: [{ path: 'x.ts', sha256: H2 }] },
    });
    expect(staleCheck(checkpoint, [{ path: 'x.ts', sha256: H2 }], CHECKED).files[0]!.status).toBe('unchanged');
  });
});

describe('by mtime against updatedAt', () => {
  it('is changed only when modified after the checkpoint was written; ISO date-times and epoch milliseconds alike', () => {
    const at = Date.parse(CREATED_AT);
    const report = staleCheck(
      hashed,
      [
        { path: 'src/index.ts', mtime: AFTER },
        { path: 'src/index.ts', mtime: BEFORE },
        { path: 'README.md', mtime: at },
        { path: 'README.md', mtime: at + 1 },
        { path: 'README.md', mtime: '2026-03-01T12:45:00.001+02:00' },
      ],
      CHECKED,
    );
    expect(report.files.map((f) => f.status)).toEqual(['changed', 'unchanged', 'unchanged', 'changed', 'changed']);
    expect(report.files.every((f) => f.reason === 'mtime')).toBe(true);
    expect(report.checkpointUpdatedAt).toBe(CREATED_AT);
  });

  it('the builder-state seed: a file modified after the checkpoint makes it stale (000, Decision 4)', () => {
    const checkpoint = materialize(SEEDS[0]!.input);
    const later = new Date(Date.parse(checkpoint.updatedAt) + 30 * 60_000).toISOString();
    const report = staleCheck(
      checkpoint,
      [
        { path: 'src/components/DarkModeToggle.tsx', mtime: later },
        { path: 'src/App.tsx', mtime: checkpoint.updatedAt },
      ],
      CHECKED,
    );
    expect(report).toMatchObject({ checkpointId: checkpoint.id, checkpointVersion: 1, checkedAt: CHECKED.toISOString(), stale: true });
    expect(report.files.map((f) => f.status)).toEqual(['changed', 'unchanged']);
  });
});

describe('what the checkpoint cannot vouch for', () => {
  it('reports paths it never mentioned as unknown (untracked), even when newer, and they do not make it stale', () => {
    const report = staleCheck(hashed, [{ path: 'src/other.ts', mtime: AFTER, sha256: H1 }], CHECKED);
    expect(report.files).toEqual([{ path: 'src/other.ts', status: 'unknown', reason: 'untracked' }]);
    expect(report.stale).toBe(false);
  });

  it('reports a tracked path without anything to compare as unknown (no-evidence)', () => {
    const report = staleCheck(hashed, [{ path: 'src/index.ts' }, { path: 'README.md', sha256: H1 }], CHECKED);
    expect(report.files.map((f) => [f.status, f.reason])).toEqual([
      ['unknown', 'no-evidence'],
      ['unknown', 'no-evidence'],
    ]);
  });

  it('answers an empty list, and a checkpoint without files', () => {
    expect(staleCheck(hashed, [], CHECKED)).toMatchObject({ stale: false, files: [], counts: { changed: 0, unchanged: 0, unknown: 0 } });
    expect(staleCheck(checkpointWith({}), [{ path: 'a', mtime: AFTER }], CHECKED).files[0]!.reason).toBe('untracked');
  });
});

describe('paths', () => {
  it('match after removing ./ segments and repeated slashes, and answer with the path as sent', () => {
    expect(normalisePath('./src//parser.ts')).toBe('src/parser.ts');
    expect(normalisePath('src/./parser.ts')).toBe('src/parser.ts');
    expect(normalisePath('/abs//x')).toBe('/abs/x');
    expect(normalisePath('.')).toBe('.');
    const report = staleCheck(hashed, [{ path: './src//parser.ts', sha256: H1 }], CHECKED);
    expect(report.files[0]).toEqual({ path: './src//parser.ts', status: 'unchanged', reason: 'sha256' });
  });

  it('are case-sensitive', () => {
    expect(staleCheck(hashed, [{ path: 'SRC/parser.ts', sha256: H1 }], CHECKED).files[0]!.reason).toBe('untracked');
  });
});
