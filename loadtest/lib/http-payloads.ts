/**
 * What the HTTP benchmark sends: task ids, realistic checkpoint bodies of
 * about 2 KB and merge patches. Bodies are sized and shaped like an agent's
 * real checkpoints (items with files, decisions, metrics, labels) so that
 * parsing, validation and hashing cost what they cost in production.
 *
 * @module
 */
import { OPEN_TASKS } from './http-config.js';

/** Task ids round-robin over OPEN_TASKS: that many tasks open at once. */
export const taskId = (i: number): string => `bench-task-${String(i % OPEN_TASKS).padStart(4, '0')}`;
/** The long tasks (HISTORY_TASKS of them) the history scenario pages through. */
export const historyTaskId = (i: number): string => `bench-history-${i}`;

/** A realistic checkpoint body of about 2 KB; `n` makes its content unique. */
export function checkpointBody(task: string, n: number): string {
  const at = new Date(1_760_000_000_000 + n * 1000).toISOString();
  return JSON.stringify({
    taskId: task,
    agentId: `agent-${n % 64}`,
    agentType: 'builder',
    iteration: 1 + (n % 7),
    executionState: {
      phase: 'implementing',
      completedItems: [
        {
          id: 'step-1',
          description: 'Add the lease table, its key layout and the migration that creates it',
          files: { created: ['src/store/leases.ts'], modified: ['src/store/keyspace.ts', 'src/store/store.ts'] },
          at,
        },
        {
          id: 'step-2',
          description: 'Reject writes that carry an older fencing epoch with 409 lease_superseded',
          files: { modified: ['src/service/task-write.ts', 'src/errors.ts'] },
          at,
        },
        'Ran the store test suite against LMDB: 212 passed',
      ],
      pendingItems: [
        { id: 'step-3', description: 'Emit LEASE_EXPIRED from the sweeper and document the orchestrator contract' },
        { id: 'step-4', description: 'Property tests: no interleaving of renew and expire lets two holders write' },
        'Update docs/leases.md with the epoch rules',
      ],
      blockedItems: [],
      currentFocus: `Run ${n}: wiring the fencing check into PATCH and finalize, then the handoff path`,
    },
    contextSummary: {
      keyDecisions: [
        {
          decision: 'Fencing tokens are per-task epochs, not per-lease random ids',
          rationale: 'A monotonic epoch lets any store reject stale writers with one comparison inside the write transaction',
          at,
          by: 'agent-architect',
        },
        'Leases expire by wall clock on the server only; clients never compare clocks',
      ],
      assumptions: ['At most one orchestrator restarts a crashed agent', 'Clock skew between replicas stays under 500 ms'],
      constraints: ['No new runtime dependencies', 'Every write stays one transaction'],
      externalDependencies: [],
    },
    metrics: {
      tokensConsumed: 40_000 + n,
      toolsInvoked: 17 + (n % 40),
      filesModified: ['src/store/keyspace.ts', 'src/service/task-write.ts', 'src/errors.ts'],
      contextUtilization: 0.42,
      testsStatus: { passed: 212, failed: 1, skipped: 3, coveragePercent: 87.5 },
    },
    recovery: {
      lastSuccessfulState: null,
      rollbackInstructions: 'git checkout -- src/service/task-write.ts && npm test',
      continuationPrompt: 'Continue with step-3: the sweeper emits LEASE_EXPIRED; keep the epoch check in one place (task-write.ts).',
    },
    labels: { team: 'platform', epic: 'leases', run: n },
  });
}

let bodyCounter = 0;

/**
 * What the create scenarios send (DESIGN §9: the targets are judged on
 * evolving bodies). `same`: every checkpoint of a task carries the same
 * items and decisions ({@link checkpointBody}); `evolving`: each task's next
 * checkpoint moves on from its last as an agent's does ({@link EvolvingBodies}).
 */
export type BodyKind = 'same' | 'evolving';

let bodyKind: BodyKind = 'same';

/** The kind of body {@link uniqueCheckpointBody} makes from now on. */
export function useBodies(kind: BodyKind): void {
  bodyKind = kind;
}

let bodyStream = '';

/**
 * Whose tasks the evolving bodies continue from now on: each server (each
 * store) has its own. A task's next body moves on from the last one sent to
 * the same server, so the steps that other servers' scenarios took (the bare
 * route's, a twin's) do not arrive at once as a text rewritten whole.
 */
export function useBodyStream(stream: string): void {
  bodyStream = stream;
}

/** A checkpoint body never sent before in this run: one counter across setup, closed and open loops. */
export function uniqueCheckpointBody(task: string): string {
  return bodyKind === 'evolving' ? evolving.next(task, bodyCounter++, bodyStream) : checkpointBody(task, bodyCounter++);
}

/**
 * A small, deterministic pseudo-random generator (mulberry32), so that two
 * runs, and two builds compared with `bench:builds`, send the same text.
 */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** About forty words agents use; three in ten written with a number after them (`lease7`). */
const VOCABULARY = (
  'lease fence epoch token handoff sweeper replay journal queue store index term shard cursor chain audit hash ' +
  'record tenant schema migration retry timeout conflict version snapshot commit batch stream event metric trace ' +
  'prompt agent worker task budget guard cache buffer'
).split(' ');

interface TaskText {
  done: { id: string; description: string; files: string[] }[];
  pending: { id: string; description: string }[];
  decisions: { decision: string; rationale: string }[];
  files: string[];
  step: number;
}

/**
 * Bodies as agents write them: a task's next checkpoint moves its first
 * pending step to done (8 kept), adds a pending step in new words (6 kept),
 * and now and then (one in four) a decision (4 kept) or a file (4 kept).
 * Seeded: the same calls give the same bodies.
 */
export class EvolvingBodies {
  private readonly tasks = new Map<string, TaskText>();
  private readonly random: () => number;

  constructor(seed = 42) {
    this.random = mulberry32(seed);
  }

  private word(): string {
    const word = VOCABULARY[Math.floor(this.random() * VOCABULARY.length)]!;
    return this.random() < 0.3 ? `${word}${Math.floor(this.random() * 100)}` : word;
  }

  private sentence(words: number): string {
    return Array.from({ length: words }, () => this.word()).join(' ');
  }

  private file(): string {
    return `src/${this.word()}/${this.word()}.ts`;
  }

  private textOf(task: string, stream: string): TaskText {
    const key = `${stream}\u0000${task}`;
    let text = this.tasks.get(key);
    if (text === undefined) {
      text = { done: [], pending: [], decisions: [], files: [], step: 0 };
      for (let i = 0; i < 8; i++) text.done.push({ id: `step-${++text.step}`, description: this.sentence(9), files: [this.file()] });
      for (let i = 0; i < 6; i++) text.pending.push({ id: `step-${++text.step}`, description: this.sentence(9) });
      for (let i = 0; i < 4; i++) text.decisions.push({ decision: this.sentence(8), rationale: this.sentence(12) });
      for (let i = 0; i < 4; i++) text.files.push(this.file());
      this.tasks.set(key, text);
    }
    return text;
  }

  /** The task's next checkpoint body as `stream` (a server) last saw the task; `n` numbers it (its run label and counters). */
  next(task: string, n: number, stream = ''): string {
    const text = this.textOf(task, stream);
    const finished = text.pending.shift()!;
    text.done.push({ ...finished, files: [this.file()] });
    if (text.done.length > 8) text.done.shift();
    text.pending.push({ id: `step-${++text.step}`, description: this.sentence(9) });
    if (this.random() < 0.25) {
      text.decisions.push({ decision: this.sentence(8), rationale: this.sentence(12) });
      text.decisions.shift();
    }
    if (this.random() < 0.25) {
      text.files.push(this.file());
      text.files.shift();
    }
    const at = new Date(1_760_000_000_000 + n * 1000).toISOString();
    return JSON.stringify({
      taskId: task,
      agentId: `agent-${n % 64}`,
      agentType: 'builder',
      iteration: 1 + (n % 7),
      executionState: {
        phase: 'implementing',
        completedItems: text.done.map((item) => ({ id: item.id, description: item.description, files: { modified: item.files }, at })),
        pendingItems: text.pending.map((item) => ({ id: item.id, description: item.description })),
        blockedItems: [],
        currentFocus: `Run ${n}: ${text.pending[0]!.description}`,
      },
      contextSummary: {
        keyDecisions: text.decisions.map((d) => ({ decision: d.decision, rationale: d.rationale, at, by: 'agent-architect' })),
        assumptions: ['At most one orchestrator restarts a crashed agent'],
        constraints: ['Every write stays one transaction'],
        externalDependencies: [],
      },
      metrics: { tokensConsumed: 40_000 + n, toolsInvoked: 17 + (n % 40), filesModified: text.files, contextUtilization: 0.42 },
      recovery: { lastSuccessfulState: null, continuationPrompt: `Continue with ${text.pending[0]!.id}: ${text.pending[0]!.description}` },
      labels: { team: 'platform', epic: 'leases', run: n },
    });
  }
}

const evolving = new EvolvingBodies();

export function patchBody(n: number): string {
  return JSON.stringify({ executionState: { currentFocus: `Patch ${n}: fencing check in finalize` }, metrics: { tokensConsumed: 50_000 + n } });
}
