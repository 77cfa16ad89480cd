/**
 * The shapes of answers that are views over several records (a lineage, a
 * task, a revision list, a stale-check report). They are the API's contract,
 * so they live here, where the service that builds them and the typed client
 * that reads them both import them.
 *
 * @module
 */
import type { Checkpoint } from './checkpoint.js';
import type { Handoff } from './handoff.js';
import type { TaskState } from './task-state.js';

export interface RevisionInfo {
  version: number;
  hash: string;
  updatedAt: string;
  status: Checkpoint['status'];
  verified: boolean;
}

export interface LineageNode {
  id: string;
  taskId: string;
  agentId: string;
  agentType?: string;
  iteration: number;
  status: Checkpoint['status'];
  phase?: string;
  createdAt: string;
  /** A stub: the checkpoint was compacted away; its place in the lineage stays. */
  compacted?: true;
}

export interface Lineage {
  checkpointId: string;
  /** Nearest first; a page continues the previous page's list. */
  ancestors: LineageNode[];
  children: LineageNode[];
}

/** A lineage answer with the cursor of the next page, absent on the last. */
export interface LineagePage extends Lineage {
  nextCursor?: string;
}

export interface TaskInfo {
  taskId: string;
  state: TaskState;
  /** Only `completed` is success; paused states are not finished. */
  finished: boolean;
  paused: boolean;
  success: boolean;
  lease: { leaseId: string; agentId: string; epoch: number; expiresAt: string } | null;
  /** The newest epoch granted or fenced: writes must carry it while a lease is live. */
  epoch: number;
  latestCheckpointId: string | null;
  recoveryPointId: string | null;
  openHandoff: Handoff | null;
  blocked: { at: string; reason: string } | null;
  checkpoints: number;
  createdAt: string;
  updatedAt: string;
}

export interface ReportedFile {
  path: string;
  /** Modification time: an ISO 8601 date-time or milliseconds since the epoch. */
  mtime?: string | number;
  /** SHA-256 of the file's content, hex. */
  sha256?: string;
}

export type FileStatus = 'changed' | 'unchanged' | 'unknown';

export type StaleReason = 'sha256' | 'mtime' | 'untracked' | 'no-evidence';

export interface FileVerdict {
  path: string;
  status: FileStatus;
  reason: StaleReason;
}

export interface StaleReport {
  checkpointId: string;
  checkpointVersion: number;
  /** The time files are compared against: the checkpoint's `updatedAt`. */
  checkpointUpdatedAt: string;
  checkedAt: string;
  stale: boolean;
  counts: Record<FileStatus, number>;
  /** One verdict per reported file, in the order they were sent. */
  files: FileVerdict[];
}
