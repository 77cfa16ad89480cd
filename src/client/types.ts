/**
 * What the client sends and gets back, typed from the server's own zod
 * schemas and domain types, so a change there shows up here as a type error.
 * Only types are imported: the client loads neither zod nor the domain at
 * run time. Answers that are views over several records come from
 * `src/domain/views.ts`, shared with the service; the few shapes the server
 * defines in `src/service` or `src/http` (which the client must not import)
 * are written out here, and `test/client/server-types.check.ts` keeps them
 * equal to the server's.
 *
 * @module
 */
import type { z } from 'zod';
import type { AuditEntry, ChainCheck } from '../domain/audit.js';
import type { Checkpoint, checkpointInput, FINAL_STATUSES, PHASES, STATUSES } from '../domain/checkpoint.js';
import type { EventType, StoredEvent } from '../domain/events.js';
import type { Handoff } from '../domain/handoff.js';
import type { Lease } from '../domain/leases.js';
import type { Recovery } from '../domain/recovery.js';
import type { TaskState } from '../domain/task-state.js';
import type { finalizeBody, handoffBody, leaseBody, recoveryBody, successorBody, taskStateBody } from '../domain/requests.js';

import type { FileStatus, FileVerdict, Lineage, LineageNode, LineagePage, ReportedFile, RevisionInfo, StaleReport, TaskInfo } from '../domain/views.js';

export type { AuditEntry, ChainCheck, Checkpoint, EventType, Handoff, Lease, Recovery, StoredEvent, TaskState };
export type { FileStatus, FileVerdict, Lineage, LineageNode, LineagePage, ReportedFile, RevisionInfo, StaleReport, TaskInfo };

/** The body of `POST /v1/checkpoints`. */
export type CheckpointInput = z.input<typeof checkpointInput>;
/** The body of `POST /v1/checkpoints/:id/finalize`. */
export type FinalizeRequest = z.infer<typeof finalizeBody>;
/** The body of `POST /v1/checkpoints/:id/handoff`. */
export type HandoffRequest = z.infer<typeof handoffBody>;
/** What an agent taking a task over says about itself: acknowledging a handoff or completing a recovery. */
export type SuccessorRequest = z.infer<typeof successorBody>;
/** The body of `POST /v1/tasks/:taskId/lease`; the server's default TTL applies when `ttlMs` is absent. */
export type LeaseRequest = Omit<z.infer<typeof leaseBody>, 'ttlMs'> & { ttlMs?: number };
/** The body of `POST /v1/tasks/:taskId/recoveries`. */
export type RecoveryRequest = z.infer<typeof recoveryBody>;
/** The body of `PUT /v1/tasks/:taskId/state`. */
export type TaskStateRequest = z.infer<typeof taskStateBody>;

/** A lease as the API shows it: its id as `leaseId`. */
export type LeaseView = Omit<Lease, 'id'> & { leaseId: string };

/** One page of a list; `nextCursor` is absent on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** A page of checkpoints; `corrupted` names the ones skipped because they failed verification. */
export interface CheckpointPage extends Page<Checkpoint> {
  corrupted?: string[];
}

export interface PageQuery {
  /** 1 to 1000. */
  limit?: number;
  cursor?: string;
}

export interface SearchQuery extends PageQuery {
  taskId?: string;
  agentId?: string;
  agentType?: string;
  phase?: (typeof PHASES)[number];
  status?: (typeof STATUSES)[number];
  finalStatus?: (typeof FINAL_STATUSES)[number];
  /** Checkpoints of tasks that touched this path. */
  file?: string;
  /** ISO 8601 date-times. */
  from?: string;
  to?: string;
  /** Full text over items and decisions: whole words, case-insensitive, every one required (docs/api.md). */
  q?: string;
  /** Each becomes a `label.NAME=VALUE` filter. */
  labels?: Record<string, string | number | boolean>;
}





export interface LinkResult {
  parentId: string;
  childId: string;
  child: Checkpoint;
}

/** A checkpoint found by walking past corrupt ones: the latest, or the recovery point. */
export interface VerifiedCheckpoint {
  checkpoint: Checkpoint;
  /** Ids of newer checkpoints that failed verification and were passed over. */
  skipped: string[];
}

export interface RecoveryPoint extends VerifiedCheckpoint {
  taskId: string;
}


export interface HandoffStarted {
  handoff: Handoff;
  /** The final checkpoint the handoff wrote (phase and final status `handoff`). */
  checkpoint: Checkpoint;
  continuationPrompt: string | null;
}

export interface HandoffAcknowledged {
  handoff: Handoff;
  /** The child checkpoint the acknowledging agent resumes from. */
  checkpoint: Checkpoint;
  lease: LeaseView;
}

export interface RecoveryStarted {
  recovery: Recovery;
  /** The recovery point; null when the recovery was blocked without one. */
  checkpoint: Checkpoint | null;
  continuationPrompt: string | null;
}

export interface RecoveryCompleted {
  recovery: Recovery;
  lease: LeaseView;
}

/** `GET /v1/checkpoints/:id/resume-prompt` with `Accept: application/json`. */
export interface ResumePrompt {
  checkpointId: string;
  version: number;
  /** The markdown prompt. */
  text: string;
  /** Tokens of `text` (o200k_base). */
  tokens: number;
  /** The budget asked for; null when the whole prompt was asked for. */
  budget: number | null;
  /** The parts summarised, shortened or left out to meet the budget, in the order they gave way. */
  dropped: string[];
}


export interface EventQuery {
  /** Only these types; all when absent. */
  types?: readonly EventType[];
  /** The cursor of the last event already seen. */
  after?: string;
}

export interface EventPageQuery extends EventQuery {
  limit?: number;
}
