/**
 * Which files changed after a checkpoint (DESIGN §3, `POST
 * /v1/checkpoints/:id/stale-check`), so a resuming agent rereads them
 * before trusting the checkpoint. Pure: it compares what the caller reports
 * of its files with what the checkpoint recorded.
 *
 * The rules, per reported file:
 * - the checkpoint recorded a SHA-256 for the path and the caller sends one:
 *   `changed` when they differ, else `unchanged` (reason `sha256`); exact;
 * - else, the checkpoint mentions the path and the caller sends an mtime:
 *   `changed` when the mtime is later than the checkpoint's `updatedAt`, else
 *   `unchanged` (reason `mtime`); as good as the two clocks agree;
 * - else, the checkpoint mentions the path but the caller sent nothing to
 *   compare: `unknown` (reason `no-evidence`);
 * - a path the checkpoint never mentions: `unknown` (reason `untracked`),
 *   whatever the caller sends: the checkpoint claims nothing about it.
 * `stale` is true when any file is `changed`.
 *
 * A path is mentioned by the files of completed, blocked and pending items
 * (created, modified or deleted) and by `metrics.filesModified`. Records are
 * read in that order, which is the order the work happened in: completed
 * items as listed, then the blocked and pending items whose partial work
 * touched files. A hash stands until a later item records the path again
 * without one (its content is then unknown, and mtime decides);
 * `metrics.filesModified`, the iteration's summary, adds paths and hashes
 * but never clears a hash. Paths match after removing `./` segments and
 * repeated slashes; case matters.
 *
 * @module
 */
import type { Checkpoint } from '../domain/checkpoint.js';
import type { FileStatus, FileVerdict, ReportedFile, StaleReport } from '../domain/views.js';





type FileRef = string | { path: string; sha256?: string };

/** `a/./b//c` and `./a/b/c` are `a/b/c`: the same file written two ways. */
export function normalisePath(path: string): string {
  const parts = path.split('/');
  const kept = parts.filter((part, i) => part !== '.' && (part !== '' || i === 0 || i === parts.length - 1));
  const joined = kept.join('/');
  return joined === '' ? path : joined;
}

/** Every path the checkpoint mentions, with the hash its latest record gives (undefined when none has one). */
export function recordedFiles(checkpoint: Checkpoint): Map<string, string | undefined> {
  const files = new Map<string, string | undefined>();
  const record = (ref: FileRef, clears: boolean) => {
    const path = normalisePath(typeof ref === 'string' ? ref : ref.path);
    const hash = typeof ref === 'string' ? undefined : ref.sha256?.toLowerCase();
    if (hash !== undefined || clears || !files.has(path)) files.set(path, hash);
  };
  const state = checkpoint.executionState ?? {};
  // Oldest evidence first, so that a later record replaces an earlier one.
  const items = [...(state.completedItems ?? []), ...(state.blockedItems ?? []), ...(state.pendingItems ?? [])];
  for (const entry of items) {
    if (typeof entry === 'string' || entry.files === undefined) continue;
    for (const ref of [...(entry.files.created ?? []), ...(entry.files.modified ?? []), ...(entry.files.deleted ?? [])]) record(ref, true);
  }
  for (const ref of checkpoint.metrics?.filesModified ?? []) record(ref, false);
  return files;
}

/** Milliseconds since the epoch of an mtime as the route accepts it. */
function epochMs(mtime: string | number): number {
  return typeof mtime === 'number' ? mtime : Date.parse(mtime);
}

export function staleCheck(checkpoint: Checkpoint, reported: readonly ReportedFile[], checkedAt: Date): StaleReport {
  const recorded = recordedFiles(checkpoint);
  const since = Date.parse(checkpoint.updatedAt);
  const counts: Record<FileStatus, number> = { changed: 0, unchanged: 0, unknown: 0 };
  const files = reported.map((file): FileVerdict => {
    const verdict = judge(recorded, normalisePath(file.path), file, since);
    counts[verdict.status] += 1;
    return { path: file.path, ...verdict };
  });
  return {
    checkpointId: checkpoint.id,
    checkpointVersion: checkpoint.version,
    checkpointUpdatedAt: checkpoint.updatedAt,
    checkedAt: checkedAt.toISOString(),
    stale: counts.changed > 0,
    counts,
    files,
  };
}

function judge(recorded: Map<string, string | undefined>, path: string, file: ReportedFile, since: number): Omit<FileVerdict, 'path'> {
  if (!recorded.has(path)) return { status: 'unknown', reason: 'untracked' };
  const hash = recorded.get(path);
  if (hash !== undefined && file.sha256 !== undefined) {
    return { status: file.sha256.toLowerCase() === hash ? 'unchanged' : 'changed', reason: 'sha256' };
  }
  if (file.mtime !== undefined) {
    const at = epochMs(file.mtime);
    if (Number.isFinite(at)) return { status: at > since ? 'changed' : 'unchanged', reason: 'mtime' };
  }
  return { status: 'unknown', reason: 'no-evidence' };
}
