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

/** A checkpoint body never sent before in this run: one counter across setup, closed and open loops. */
export function uniqueCheckpointBody(task: string): string {
  return checkpointBody(task, bodyCounter++);
}

export function patchBody(n: number): string {
  return JSON.stringify({ executionState: { currentFocus: `Patch ${n}: fencing check in finalize` }, metrics: { tokensConsumed: 50_000 + n } });
}
