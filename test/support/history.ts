/**
 * The history of a partition scenario (`netns.ts`): every operation a
 * client invoked, with the answer it got (or none: a timeout, a dropped
 * connection), and the checks the issue asks of it once the links are
 * healed and the queues have replayed:
 * - If-Match chains are linear: per checkpoint, no two acknowledged patches
 *   name the same version, and each makes the version after the one it named;
 * - one acknowledger per handoff;
 * - one holder per lease epoch of a task;
 * - every acknowledged write (201, or 202 from a queue) is present exactly
 *   once in what the cluster holds at the end.
 * Pure functions over records, so that they are tested on histories made
 * by hand (`test/fleet/history-checker.test.ts`).
 */

/** One operation as a client saw it. */
export type Operation =
  | { kind: 'create'; taskId: string; status?: number; checkpointId?: string }
  | { kind: 'patch'; checkpointId: string; ifMatch: number; status?: number; version?: number }
  | { kind: 'ack'; handoffId: string; agentId: string; status?: number }
  | { kind: 'lease'; taskId: string; agentId: string; status?: number; epoch?: number };

export interface Recorded {
  /** Which instance the client sent it through. */
  instance: number;
  invokedAt: number;
  answeredAt?: number;
  op: Operation;
}

/** What the cluster holds at the end: each task's checkpoint ids, as its history lists them. */
export type FinalState = ReadonlyMap<string, readonly string[]>;

export interface Violation {
  check: 'if-match-linear' | 'one-acknowledger' | 'one-holder-per-epoch' | 'acknowledged-present-once';
  detail: string;
}

/** An answer that acknowledged the operation: it took effect, now or (202) once its queue replays. */
const acknowledged = (status: number | undefined): boolean => status === 200 || status === 201 || status === 202;

export interface Figures {
  operations: number;
  acknowledged: number;
  /** Operations with no answer (a timeout, a dropped connection): they may or may not have applied. */
  unanswered: number;
  lost: number;
  duplicated: number;
}

/** Every violation of the history against the final state, and the figures a note reports. */
export function checkHistory(history: readonly Recorded[], final: FinalState): { violations: Violation[]; figures: Figures } {
  const violations: Violation[] = [];
  const byCheckpoint = new Map<string, { ifMatch: number; version?: number }[]>();
  const acknowledgers = new Map<string, Set<string>>();
  const holders = new Map<string, Set<string>>();
  const created: { taskId: string; checkpointId: string }[] = [];
  for (const { op } of history) {
    if (!acknowledged(op.status)) continue;
    switch (op.kind) {
      case 'patch': {
        const list = byCheckpoint.get(op.checkpointId) ?? [];
        list.push({ ifMatch: op.ifMatch, ...(op.version !== undefined ? { version: op.version } : {}) });
        byCheckpoint.set(op.checkpointId, list);
        break;
      }
      case 'ack':
        acknowledgers.set(op.handoffId, (acknowledgers.get(op.handoffId) ?? new Set()).add(op.agentId));
        break;
      case 'lease':
        if (op.epoch !== undefined) holders.set(`${op.taskId}\u0000${op.epoch}`, (holders.get(`${op.taskId}\u0000${op.epoch}`) ?? new Set()).add(op.agentId));
        break;
      case 'create':
        if (op.checkpointId !== undefined) created.push({ taskId: op.taskId, checkpointId: op.checkpointId });
        break;
    }
  }
  for (const [checkpointId, patches] of byCheckpoint) {
    const named = new Map<number, number>();
    for (const { ifMatch, version } of patches) {
      named.set(ifMatch, (named.get(ifMatch) ?? 0) + 1);
      if (version !== undefined && version !== ifMatch + 1) violations.push({ check: 'if-match-linear', detail: `${checkpointId}: If-Match ${ifMatch} made version ${version}` });
    }
    for (const [ifMatch, count] of named) if (count > 1) violations.push({ check: 'if-match-linear', detail: `${checkpointId}: ${count} acknowledged patches on version ${ifMatch}` });
  }
  for (const [handoffId, agents] of acknowledgers) if (agents.size > 1) violations.push({ check: 'one-acknowledger', detail: `${handoffId}: acknowledged by ${[...agents].join(', ')}` });
  for (const [key, agents] of holders) if (agents.size > 1) violations.push({ check: 'one-holder-per-epoch', detail: `${key.replace('\u0000', ' epoch ')}: held by ${[...agents].join(', ')}` });
  let lost = 0;
  let duplicated = 0;
  for (const { taskId, checkpointId } of created) {
    const present = (final.get(taskId) ?? []).filter((id) => id === checkpointId).length;
    if (present === 0) lost++;
    if (present > 1) duplicated++;
    if (present !== 1) violations.push({ check: 'acknowledged-present-once', detail: `${taskId}/${checkpointId}: present ${present} times` });
  }
  const figures: Figures = {
    operations: history.length,
    acknowledged: history.filter(({ op }) => acknowledged(op.status)).length,
    unanswered: history.filter(({ op }) => op.status === undefined).length,
    lost,
    duplicated,
  };
  return { violations, figures };
}
